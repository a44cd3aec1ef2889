#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
// OpenSSL 3 headers plus a few inline wrappers for APIs that are macros (Swift cannot import
// function-like macros) or that need C-only constructs (ASN1_ITEM_rptr, unions).
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/http.h>
#include <openssl/objects.h>
#include <openssl/ocsp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/crypto.h>

static inline void COpenSSL_free(void *p) { OPENSSL_free(p); }

/// The EVP_PKEY_fromdata selection for a public key (a macro of macros).
static inline int COpenSSL_EVP_PKEY_PUBLIC_KEY(void) { return EVP_PKEY_PUBLIC_KEY; }

static inline unsigned long COpenSSL_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }

static inline long COpenSSL_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }

static inline void COpenSSL_X509V3_set_ctx_nodb(X509V3_CTX *ctx) { X509V3_set_ctx_nodb(ctx); }

static inline void COpenSSL_sk_X509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }
static inline void COpenSSL_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
static inline void COpenSSL_sk_ASN1_TYPE_pop_free(STACK_OF(ASN1_TYPE) *sk) { sk_ASN1_TYPE_pop_free(sk, ASN1_TYPE_free); }

/// The inner value of an ASN1_TYPE that holds a string-like or constructed value
/// (INTEGER, OCTET STRING, UTF8String, IA5String, SEQUENCE, SET all store an ASN1_STRING).
static inline const ASN1_STRING *COpenSSL_ASN1_TYPE_string(const ASN1_TYPE *t) {
    if (t == NULL || t->type == V_ASN1_BOOLEAN || t->type == V_ASN1_NULL || t->type == V_ASN1_OBJECT) return NULL;
    return t->value.asn1_string;
}

static inline int COpenSSL_PKCS7_is_signed(const PKCS7 *p7) { return PKCS7_type_is_signed(p7); }

/// The eContent OCTET STRING of a SignedData whose content type is id-data (BER constructed
/// strings are already joined by OpenSSL's decoder), or NULL.
static inline const ASN1_OCTET_STRING *COpenSSL_PKCS7_signed_data_content(const PKCS7 *p7) {
    if (!PKCS7_type_is_signed(p7) || p7->d.sign == NULL || p7->d.sign->contents == NULL) return NULL;
    const PKCS7 *inner = p7->d.sign->contents;
    if (!PKCS7_type_is_data(inner)) return NULL;
    return inner->d.data;
}

static inline STACK_OF(X509) *COpenSSL_PKCS7_certificates(const PKCS7 *p7) {
    if (!PKCS7_type_is_signed(p7) || p7->d.sign == NULL) return NULL;
    return p7->d.sign->cert;
}

/// Posts a DER OCSP request to a plain-HTTP responder URL with a timeout (seconds).
/// Returns NULL when the responder cannot be reached or answers garbage; *reached tells which.
static inline OCSP_RESPONSE *COpenSSL_OCSP_query(const char *url, OCSP_REQUEST *req, int timeout, size_t max_resp, int *reached) {
    char *host = NULL, *port = NULL, *path = NULL;
    int use_ssl = 0;
    *reached = 0;
    if (!OSSL_HTTP_parse_url(url, &use_ssl, NULL, &host, &port, NULL, &path, NULL, NULL)) return NULL;
    OCSP_RESPONSE *result = NULL;
    BIO *req_bio = NULL, *resp_bio = NULL;
    if (use_ssl) goto done; // Apple's responders are plain HTTP; TLS would need a bio callback.
    req_bio = ASN1_item_i2d_mem_bio(ASN1_ITEM_rptr(OCSP_REQUEST), (const ASN1_VALUE *)req);
    if (req_bio == NULL) goto done;
    resp_bio = OSSL_HTTP_transfer(NULL, host, port, path, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL,
                                  "application/ocsp-request", req_bio, "application/ocsp-response", 1,
                                  max_resp, timeout, 0);
    if (resp_bio == NULL) goto done;
    *reached = 1;
    result = (OCSP_RESPONSE *)ASN1_item_d2i_bio(ASN1_ITEM_rptr(OCSP_RESPONSE), resp_bio, NULL);
done:
    BIO_free(req_bio);
    BIO_free(resp_bio);
    OPENSSL_free(host);
    OPENSSL_free(port);
    OPENSSL_free(path);
    return result;
}

#endif
