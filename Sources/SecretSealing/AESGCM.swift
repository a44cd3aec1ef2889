import COpenSSL

/// AES-256-GCM through OpenSSL's EVP interface: one-shot seal and open of a short value.
enum AESGCM {
    /// `(ciphertext, tag)`; throws only when OpenSSL itself fails.
    static func seal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], associatedData: [UInt8]) throws(SecretsError)
        -> (ciphertext: [UInt8], tag: [UInt8])
    {
        guard let context = EVP_CIPHER_CTX_new() else { throw failure("seal") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: SealedSecret.tagCount)
        var written: Int32 = 0
        var total = 0
        guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1,
            EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1
        else { throw failure("seal") }
        if !associatedData.isEmpty {
            guard EVP_EncryptUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1 else {
                throw failure("seal")
            }
        }
        if !plaintext.isEmpty {
            let ok = ciphertext.withUnsafeMutableBufferPointer { out in
                EVP_EncryptUpdate(context, out.baseAddress, &written, plaintext, Int32(plaintext.count))
            }
            guard ok == 1 else { throw failure("seal") }
            total = Int(written)
        }
        let finished = ciphertext.withUnsafeMutableBufferPointer { out in
            EVP_EncryptFinal_ex(context, out.baseAddress! + total, &written)
        }
        guard finished == 1 else { throw failure("seal") }
        total += Int(written)
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tag.count), &tag) == 1 else {
            throw failure("seal")
        }
        return (Array(ciphertext.prefix(total)), tag)
    }

    /// The plaintext, or `nil` when the tag does not authenticate ciphertext and associated data.
    static func open(
        key: [UInt8], nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8], associatedData: [UInt8]
    ) throws(SecretsError) -> [UInt8]? {
        guard let context = EVP_CIPHER_CTX_new() else { throw failure("open") }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0
        var total = 0
        var expectedTag = tag
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1,
            EVP_DecryptInit_ex(context, nil, nil, key, nonce) == 1
        else { throw failure("open") }
        if !associatedData.isEmpty {
            guard EVP_DecryptUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1 else {
                throw failure("open")
            }
        }
        if !ciphertext.isEmpty {
            let ok = plaintext.withUnsafeMutableBufferPointer { out in
                EVP_DecryptUpdate(context, out.baseAddress, &written, ciphertext, Int32(ciphertext.count))
            }
            guard ok == 1 else { throw failure("open") }
            total = Int(written)
        }
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(expectedTag.count), &expectedTag) == 1 else {
            throw failure("open")
        }
        // The tag is checked here: anything but 1 means the value is not authentic.
        let finished = plaintext.withUnsafeMutableBufferPointer { out in
            EVP_DecryptFinal_ex(context, out.baseAddress! + total, &written)
        }
        ERR_clear_error()
        guard finished == 1 else { return nil }
        total += Int(written)
        return Array(plaintext.prefix(total))
    }

    private static func failure(_ operation: String) -> SecretsError {
        // OpenSSL's queued reason is dropped: it never helps the operator and must not leak into the next call.
        ERR_clear_error()
        return SecretsError(.cryptoFailed, "OpenSSL could not \(operation) with AES-256-GCM")
    }
}
