// swift-tools-version:6.0
// nfcbench: an NFC reader-session and HCE reader-event harness on libnfc and PC/SC.
// The module arrows are the dependency lists below, and nowhere else: scripts/check-module-boundaries
// checks every import against them (and no unused arrow), generates README "Layout"'s table from
// them, and keeps the pure modules free of I/O; only NFCHardware imports the C targets.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "nfcbench",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "NFCBase", targets: ["NFCBase"]),
        .library(name: "NFCTags", targets: ["NFCTags"]),
        .library(name: "NFCFiles", targets: ["NFCFiles"]),
        .library(name: "NFCTrace", targets: ["NFCTrace"]),
        // With the lock folder: code that used SessionArbiter(lockDirectory:) adds `import ReaderSessionLocks`.
        .library(name: "ReaderSession", targets: ["ReaderSession", "ReaderSessionLocks"]),
        .library(name: "HCEEvents", targets: ["HCEEvents"]),
        .library(name: "ReaderSessionLocks", targets: ["ReaderSessionLocks"]),
        .library(name: "ReaderFrontend", targets: ["ReaderFrontend"]),
        .library(name: "NFCHardware", targets: ["NFCHardware"]),
        .library(name: "VirtualHardware", targets: ["VirtualHardware"]),
        .library(name: "ReaderSessionConformance", targets: ["ReaderSessionConformance"]),
        .library(name: "NFCBenchKit", targets: ["NFCBenchKit"]),
        .executable(name: "nfcbench", targets: ["nfcbench"]),
    ],
    targets: [
        // C: libnfc through its pkg-config file (Debian: libnfc-dev).
        .systemLibrary(name: "CNFC", pkgConfig: "libnfc", providers: [.apt(["libnfc-dev"])]),
        // C: pcsc-lite. A plain C target, not pkgConfig "libpcsclite" (whose .pc makes every
        // build warn about -pthread); include/ forwards <pcsclite.h> and <wintypes.h>.
        .target(name: "CPCSC", linkerSettings: [.linkedLibrary("pcsclite")]),

        // Under everything: the thin-device protocol and its target types, the clock, SplitMix64.
        .target(name: "NFCBase", swiftSettings: strict),
        .target(name: "NFCTags", dependencies: ["NFCBase"], swiftSettings: strict),
        // The one way to write (and read) a file the user names: `-`, atomic replace, links,
        // FIFOs and devices, checked writes, same-file refusal, backups, 0600/0700.
        .target(name: "NFCFiles", dependencies: ["NFCTags"], swiftSettings: strict),
        // The JSON Lines trace: JSON values, the one header writer, location and rotation, and
        // what is made from traces (pcapng export, event diff, SVG timeline).
        .target(name: "NFCTrace", dependencies: ["NFCTags", "NFCFiles"], swiftSettings: strict),
        .target(
            name: "ReaderSession", dependencies: ["NFCBase", "NFCTags", "NFCTrace"], swiftSettings: strict),
        // The arbiter's cross-process half as files (lock files, queue tickets, heat files), which
        // whoever opens real readers installs: ReaderSession itself does no file I/O.
        .target(name: "ReaderSessionLocks", dependencies: ["ReaderSession", "NFCTrace"], swiftSettings: strict),
        .target(name: "HCEEvents", dependencies: ["NFCTags"], swiftSettings: strict),
        // The one reader frontend: discovery over thin devices, the session runtime's backend.
        .target(
            name: "ReaderFrontend", dependencies: ["NFCBase", "NFCTags", "ReaderSession"], exclude: ["README.md"],
            swiftSettings: strict),
        .target(
            name: "NFCHardware",
            dependencies: ["CNFC", "CPCSC", "NFCTags"],
            swiftSettings: strict),
        .target(
            name: "VirtualHardware",
            dependencies: ["NFCBase", "NFCTags", "NFCFiles", "HCEEvents"],
            exclude: ["PN532/README.md"],
            swiftSettings: strict),
        .target(
            name: "ReaderSessionConformance",
            dependencies: ["ReaderSession", "ReaderFrontend", "NFCTags", "NFCFiles", "NFCTrace"],
            swiftSettings: strict),
        // The bench as a library: readers opened by the --device strings (sim:, pcsc:NAME, pcsc:0,
        // libnfc connstrings), the bench data, device listing. The CLI is a shell over it.
        .target(
            name: "NFCBenchKit",
            dependencies: [
                "NFCBase", "NFCTags", "NFCFiles", "NFCTrace", "ReaderSession", "ReaderSessionLocks", "ReaderFrontend",
                "NFCHardware",
                "VirtualHardware", "HCEEvents",
            ],
            swiftSettings: strict),
        // The seeded fuzzing of every parser a stranger can feed (`nfcbench bench fuzz`, `bench
        // ndef-fuzz`): the targets, the mutator, the runner and its watchdog.
        .target(
            name: "NFCBenchFuzz",
            dependencies: [
                "NFCBase", "NFCTags", "ReaderSession", "VirtualHardware", "HCEEvents", "ReaderSessionConformance",
                "NFCBenchKit",
            ],
            swiftSettings: strict),
        // Reference apps for the conformance harness (ordinary app code: one correct, four faulty).
        .target(
            name: "ReferenceApps", dependencies: ["ReaderSession", "NFCTags"], path: "Examples/ReferenceApps",
            swiftSettings: strict),
        .executableTarget(
            name: "nfcbench",
            dependencies: [
                "NFCBase", "NFCTags", "NFCFiles", "NFCTrace", "ReaderSession", "ReaderSessionLocks", "ReaderFrontend",
                "HCEEvents", "NFCHardware", "VirtualHardware", "ReaderSessionConformance", "ReferenceApps",
                "NFCBenchKit", "NFCBenchFuzz",
            ],
            swiftSettings: strict),

        // What the test targets share (issue 35): TestFolder, the package and corpus paths, the
        // off-pool helper and the real-time wait helpers (the only sleeps in Tests).
        .target(
            name: "NFCBenchTestSupport", dependencies: ["NFCBase"], path: "Tests/NFCBenchTestSupport",
            swiftSettings: strict),
        .testTarget(
            name: "NFCTagsTests", dependencies: ["NFCBase", "NFCTags", "NFCFiles", "NFCBenchTestSupport"],
            swiftSettings: strict),
        .testTarget(name: "NFCFilesTests", dependencies: ["NFCBase", "NFCFiles", "NFCTags"], swiftSettings: strict),
        .testTarget(name: "NFCTraceTests", dependencies: ["NFCTrace", "NFCTags"], swiftSettings: strict),
        .testTarget(
            name: "ReaderSessionTests",
            dependencies: [
                "ReaderSession", "ReaderSessionLocks", "ReaderFrontend", "NFCTags", "NFCFiles", "NFCTrace",
                "NFCBenchTestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "ReaderFrontendTests",
            dependencies: ["ReaderFrontend", "ReaderSession", "NFCTags", "NFCBenchTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "HCEEventsTests", dependencies: ["HCEEvents", "NFCTags", "NFCBenchTestSupport"], swiftSettings: strict
        ),
        .testTarget(
            name: "VirtualHardwareTests",
            dependencies: [
                "NFCBase", "VirtualHardware", "NFCTags", "NFCFiles", "ReaderSession", "ReaderFrontend", "HCEEvents",
                "NFCBenchTestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "NFCHardwareTests",
            dependencies: [
                "NFCBase", "NFCHardware", "NFCTags", "NFCFiles", "ReaderSession", "ReaderFrontend", "VirtualHardware",
                "NFCBenchTestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "ReaderSessionConformanceTests",
            dependencies: ["ReaderSessionConformance", "ReaderSession", "NFCTags", "NFCBenchTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "NFCBenchKitTests",
            dependencies: [
                "NFCBenchKit", "NFCHardware", "NFCTags", "NFCTrace", "ReaderSession", "NFCFiles", "NFCBenchTestSupport",
            ],
            swiftSettings: strict),
        // End-to-end tests exec the built binary (never `swift run`).
        // (and drive the bench app in virtual time through its module: the simulated reader).
        .testTarget(
            name: "NFCBenchTests",
            dependencies: [
                "nfcbench", "NFCTrace", "NFCTags", "NFCFiles", "ReaderSession", "ReaderFrontend", "VirtualHardware",
                "HCEEvents", "NFCBenchKit", "NFCBenchFuzz", "NFCBase", "NFCBenchTestSupport",
            ],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
