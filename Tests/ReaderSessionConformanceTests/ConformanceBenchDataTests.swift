import Foundation
import NFCBenchTestSupport
import ReaderSessionConformance
import Testing

/// `ConformanceBenchData`: an app's tests (the example app, a `nfcbench new-app` package) get
/// nfcbench's shipped tags and built-in suite from the library, never by counting folders up
/// from their own file (issue 14 item 11).
@Suite("Bench data for an app's own tests")
struct ConformanceBenchDataTests {
    @Test("The shipped tags and the built-in suite are found from the library, in this clone's hardware/")
    func found() throws {
        let clone = TestPaths.packageRoot.path
        #expect(ConformanceBenchData.hardwareDirectory == clone + "/hardware")
        let tag = try ConformanceBenchData.tagFile("ntag215-uri")
        #expect(tag.type == .ntag215)
        let suite = try ConformanceBenchData.builtinSuite()
        #expect(suite.contains { $0.name.hasPrefix("200") }, "\(suite.map(\.name))")
    }

    @Test("A tag name that is not shipped is a not-found error naming where it looked")
    func missing() {
        #expect {
            _ = try ConformanceBenchData.tagFile("no-such-tag")
        } throws: { error in
            "\(error)".contains("hardware/tags")
        }
    }
}
