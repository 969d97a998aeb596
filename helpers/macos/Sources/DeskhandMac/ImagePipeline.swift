import Accelerate
import CoreGraphics
import DeskhandHelperCore
import Foundation
import ImageIO
import UniformTypeIdentifiers

/// Converting captured images to the one pixel layout the handler knows.
enum PixelConversion {
    private static let bitmapInfo = CGImageAlphaInfo.noneSkipLast.rawValue | CGBitmapInfo.byteOrder32Big.rawValue

    /// `image` drawn into an sRGB, 8-bit RGBX buffer of `size`. Drawing,
    /// rather than reading the image's bytes, converts from whatever pixel
    /// format and colour space the capture delivered; it is never assumed.
    static func rgbx(from image: CGImage, size: Size) throws -> PixelBuffer {
        guard size.width > 0, size.height > 0, let space = CGColorSpace(name: CGColorSpace.sRGB) else {
            throw DesktopError.captureFailed("cannot make a \(size.width)x\(size.height) sRGB buffer")
        }
        let bytesPerRow = size.width * 4
        var bytes = [UInt8](repeating: 0, count: bytesPerRow * size.height)
        let drawn = bytes.withUnsafeMutableBytes { raw -> Bool in
            guard
                let context = CGContext(
                    data: raw.baseAddress, width: size.width, height: size.height, bitsPerComponent: 8,
                    bytesPerRow: bytesPerRow, space: space, bitmapInfo: bitmapInfo)
            else {
                return false
            }
            context.interpolationQuality = .high
            context.draw(image, in: CGRect(x: 0, y: 0, width: size.width, height: size.height))
            return true
        }
        guard drawn else {
            throw DesktopError.captureFailed("cannot convert the \(image.width)x\(image.height) capture to RGB")
        }
        return PixelBuffer(width: size.width, height: size.height, bytesPerRow: bytesPerRow, bytes: bytes)
    }

    /// A CGImage over an RGBX buffer, without alpha.
    static func cgImage(from pixels: PixelBuffer) throws -> CGImage {
        guard let space = CGColorSpace(name: CGColorSpace.sRGB),
            let provider = CGDataProvider(data: Data(pixels.bytes) as CFData),
            let image = CGImage(
                width: pixels.width, height: pixels.height, bitsPerComponent: 8, bitsPerPixel: 32,
                bytesPerRow: pixels.bytesPerRow, space: space, bitmapInfo: CGBitmapInfo(rawValue: bitmapInfo),
                provider: provider, decode: nil, shouldInterpolate: false, intent: .defaultIntent)
        else {
            throw DesktopError.encodingFailed("cannot make a \(pixels.width)x\(pixels.height) image")
        }
        return image
    }
}

/// Scales with vImage and encodes with ImageIO. The output never has an
/// alpha channel: PNG is 8-bit RGB, JPEG is what ImageIO writes for an
/// opaque sRGB image (YCbCr, with ImageIO's chroma subsampling).
public struct MacImageEncoder: ImageEncoder {
    public init() {}

    public func encode(_ pixels: PixelBuffer, size: Size, format: ImageFormat, quality: Int) throws -> [UInt8] {
        let scaled: PixelBuffer
        if size.width == pixels.width && size.height == pixels.height {
            scaled = pixels
        } else {
            scaled = try Self.scale(pixels, to: size)
        }
        let image = try PixelConversion.cgImage(from: scaled)
        let type = (format == .jpeg ? UTType.jpeg : UTType.png).identifier as CFString
        let data = NSMutableData()
        guard let destination = CGImageDestinationCreateWithData(data as CFMutableData, type, 1, nil) else {
            throw DesktopError.encodingFailed("ImageIO has no \(format.rawValue) encoder")
        }
        var properties: [CFString: Any] = [:]
        if format == .jpeg {
            properties[kCGImageDestinationLossyCompressionQuality] = Double(quality) / 100
        }
        CGImageDestinationAddImage(destination, image, properties as CFDictionary)
        guard CGImageDestinationFinalize(destination) else {
            throw DesktopError.encodingFailed("ImageIO could not write the \(size.width)x\(size.height) \(format.rawValue)")
        }
        return [UInt8](data as Data)
    }

    /// Resamples with vImage's high-quality (Lanczos) kernel, which takes
    /// every source pixel into account when shrinking; upscaling works too.
    /// The fourth byte is scaled like the others and ignored afterwards.
    static func scale(_ pixels: PixelBuffer, to size: Size) throws -> PixelBuffer {
        var source = pixels.bytes
        var output = [UInt8](repeating: 0, count: size.width * size.height * 4)
        let status = source.withUnsafeMutableBytes { sourceBytes -> vImage_Error in
            output.withUnsafeMutableBytes { outputBytes -> vImage_Error in
                var sourceBuffer = vImage_Buffer(
                    data: sourceBytes.baseAddress, height: vImagePixelCount(pixels.height),
                    width: vImagePixelCount(pixels.width), rowBytes: pixels.bytesPerRow)
                var outputBuffer = vImage_Buffer(
                    data: outputBytes.baseAddress, height: vImagePixelCount(size.height),
                    width: vImagePixelCount(size.width), rowBytes: size.width * 4)
                return vImageScale_ARGB8888(
                    &sourceBuffer, &outputBuffer, nil, vImage_Flags(kvImageHighQualityResampling))
            }
        }
        guard status == kvImageNoError else {
            throw DesktopError.encodingFailed(
                "vImageScale_ARGB8888 \(pixels.width)x\(pixels.height) -> \(size.width)x\(size.height) failed with \(status)")
        }
        return PixelBuffer(width: size.width, height: size.height, bytesPerRow: size.width * 4, bytes: output)
    }
}
