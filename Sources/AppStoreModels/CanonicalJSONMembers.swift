/// One object written member by member in the order the caller gives, which must be the keys'
/// UTF-8 order, optionals left out when nil: the hand-written encodings of stored models (a
/// transaction fact, a lifecycle event, a CustomerInfo), each held by its tests to the bytes
/// its `Encodable` conformance gives through `AppStoreJSON`.
/// - Note: Not thread-safe; lives for one object of one document.
package struct CanonicalJSONMembers {
    package let writer: CanonicalJSONWriter
    @usableFromInline var first = true

    /// Opens the object.
    @inlinable
    package init(_ writer: CanonicalJSONWriter) {
        self.writer = writer
        writer.append(0x7B)
    }

    /// Writes the next key; its value follows.
    @inlinable
    package mutating func key(_ name: StaticString) {
        if !first { writer.append(0x2C) }
        first = false
        writer.append(0x22)
        writer.append(name)
        writer.append("\":")
    }

    @inlinable
    package mutating func string(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        writer.writeString(value)
    }

    @inlinable
    package mutating func bool(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        writer.writeBool(value)
    }

    @inlinable
    package mutating func integer<I: BinaryInteger>(_ name: StaticString, _ value: I?) {
        guard let value else { return }
        key(name)
        writer.writeInteger(value)
    }

    /// An instant, as `Timestamp` encodes itself: its milliseconds.
    @inlinable
    package mutating func instant(_ name: StaticString, _ value: Timestamp?) {
        integer(name, value?.millisecondsSince1970)
    }

    /// An array of strings.
    @inlinable
    package mutating func strings(_ name: StaticString, _ values: [String]) {
        key(name)
        writer.writeStrings(values)
    }

    /// Closes the object.
    @inlinable
    package func end() { writer.append(0x7D) }
}

extension CanonicalJSONWriter {
    /// An array of strings.
    @inlinable
    package func writeStrings(_ values: [String]) {
        append(0x5B)
        for (index, value) in values.enumerated() {
            if index > 0 { append(0x2C) }
            writeString(value)
        }
        append(0x5D)
    }
}
