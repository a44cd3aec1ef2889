import Foundation
import StorekeeperTesting
import Testing

/// Test folders go when the test process exits, whatever the tests did (runs had left hundreds
/// in the temporary folder: CLI, OCSP and SQLite test directories nobody removed).
struct ScratchDirectoriesTests {
    @Test(
        .enabled(
            if: TestProbes.path != nil,
            "no StorekeeperTestProbes executable beside the tests (set STOREKEEPER_TEST_PROBES)"))
    func aScratchDirectoryIsRemovedWhenTheProcessExits() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(TestProbes.path))
        process.arguments = ["scratch"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var printed = Data()
        while !printed.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed += chunk
        }
        let path = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(path.hasPrefix(FileManager.default.temporaryDirectory.path))
        #expect(FileManager.default.fileExists(atPath: path + "/file"))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aMadeDirectoryIsListedForRemoval() throws {
        let directory = try ScratchDirectories.make(prefix: "storekeeper-scratch-test")
        #expect(ScratchDirectories.listed.contains(directory.path))
        #expect(directory.lastPathComponent.hasPrefix("storekeeper-scratch-test-"))
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
    }
}
