// swift-tools-version:6.0
//
// deskhand's macOS capture helper. The sources live in helpers/macos (see
// its README for building, signing and the permissions a user grants); the
// Go supervisor and the Linux helper are built by the Makefile, not here.
//
//   swift build -c release --product deskhand-helper
//   swift test
//
// DeskhandHelperCore is the protocol: framing, JSON-RPC, parameter checks and
// the request handler, a function from request bytes to response bytes that
// reaches the desktop only through the `Desktop` protocol. It uses nothing
// but Foundation, so the tests drive it with the shared transcripts both
// through a fake desktop and through the real one.
//
// On Linux (`make swift-test`, in a Debian root with swiftlang) the package
// is the core and its tests alone: the Apple frameworks DeskhandMac and the
// executable need do not exist there, so those targets and the tests that
// drive the real desktop are left out, and the rest is built and run.
//
// Licensed under the Apache License 2.0, as the whole repository (LICENSE);
// SwiftPM has no field for it.
import PackageDescription

#if os(Linux)
let onApple = false
#else
let onApple = true
#endif

// The core is compiled in the Swift 6 language mode (complete concurrency
// checking). The framework targets stay in Swift 5 mode until a Mac build
// can check them: they cannot be compiled on the machines CI runs on.
let core: Target = .target(
    name: "DeskhandHelperCore",
    path: "helpers/macos/Sources/DeskhandHelperCore",
    swiftSettings: [.swiftLanguageMode(.v6)]
)

let mac: [Target] = [
    .target(
        name: "DeskhandMac",
        dependencies: ["DeskhandHelperCore"],
        path: "helpers/macos/Sources/DeskhandMac",
        swiftSettings: [.swiftLanguageMode(.v5)],
        linkerSettings: [
            .linkedFramework("AppKit"),
            .linkedFramework("ApplicationServices"),
            .linkedFramework("Accelerate"),
            .linkedFramework("Carbon"),
            .linkedFramework("CoreGraphics"),
            .linkedFramework("ImageIO"),
            .linkedFramework("ScreenCaptureKit"),
            .linkedFramework("UniformTypeIdentifiers"),
        ]
    ),
    .executableTarget(
        name: "deskhand-helper",
        dependencies: ["DeskhandHelperCore", "DeskhandMac"],
        path: "helpers/macos/Sources/deskhand-helper",
        swiftSettings: [.swiftLanguageMode(.v5)],
        linkerSettings: [
            // A command-line tool has no bundle, so its Info.plist (and with
            // it the stable bundle identifier that TCC grants stick to) is
            // embedded in the binary. build.sh passes the same flags.
            .unsafeFlags([
                "-Xlinker", "-sectcreate",
                "-Xlinker", "__TEXT",
                "-Xlinker", "__info_plist",
                "-Xlinker", "\(Context.packageDirectory)/helpers/macos/Info.plist",
            ]),
        ]
    ),
]

// The tests that need AppKit or the built helper run on macOS only.
let macOnlyTests = ["MacNamesTests.swift", "MacTranscriptTests.swift"]

let tests: Target = .testTarget(
    name: "DeskhandHelperTests",
    dependencies: onApple ? ["DeskhandHelperCore", "DeskhandMac", "deskhand-helper"] : ["DeskhandHelperCore"],
    path: "helpers/macos/Tests/DeskhandHelperTests",
    exclude: onApple ? [] : macOnlyTests,
    swiftSettings: [.swiftLanguageMode(onApple ? .v5 : .v6)]
)

let package = Package(
    name: "deskhand",
    platforms: [.macOS(.v14)],
    products: onApple
        ? [
            .executable(name: "deskhand-helper", targets: ["deskhand-helper"]),
            .library(name: "DeskhandHelperCore", targets: ["DeskhandHelperCore"]),
        ]
        : [.library(name: "DeskhandHelperCore", targets: ["DeskhandHelperCore"])],
    targets: [core] + (onApple ? mac : []) + [tests]
)
