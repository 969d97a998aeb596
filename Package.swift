// swift-tools-version:5.9
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
// Licensed under the Apache License 2.0, as the whole repository (LICENSE);
// SwiftPM has no field for it.
import PackageDescription

let package = Package(
    name: "deskhand",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "deskhand-helper", targets: ["deskhand-helper"]),
        .library(name: "DeskhandHelperCore", targets: ["DeskhandHelperCore"]),
    ],
    targets: [
        .target(
            name: "DeskhandHelperCore",
            path: "helpers/macos/Sources/DeskhandHelperCore"
        ),
        .target(
            name: "DeskhandMac",
            dependencies: ["DeskhandHelperCore"],
            path: "helpers/macos/Sources/DeskhandMac",
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
        .testTarget(
            name: "DeskhandHelperTests",
            dependencies: ["DeskhandHelperCore", "DeskhandMac", "deskhand-helper"],
            path: "helpers/macos/Tests/DeskhandHelperTests"
        ),
    ]
)
