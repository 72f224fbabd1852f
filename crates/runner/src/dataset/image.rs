//! Seeded random images for `dataset.kind: image`, encoded as data URLs before the trial
//! (never while sending): PNG (zlib through `flate2`, CRC-32 through `crc32fast`, both
//! already in the dependency tree through hdrhistogram) or BMP, written here by hand.

use std::io::Write;

use base64::Engine as _;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// The image formats servebench writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// PNG, 8-bit RGB, deflate-compressed (random pixels barely compress).
    Png,
    /// BMP, 24-bit, uncompressed.
    Bmp,
}

impl From<servebench_spec::ImageFormat> for ImageFormat {
    fn from(f: servebench_spec::ImageFormat) -> Self {
        match f {
            servebench_spec::ImageFormat::Png => ImageFormat::Png,
            servebench_spec::ImageFormat::Bmp => ImageFormat::Bmp,
        }
    }
}

/// What the images of one request look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageShape {
    /// Images per request.
    pub count: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Encoding.
    pub format: ImageFormat,
}

/// `count` data URLs of random images drawn with `seed`: the same seed gives the same bytes.
pub fn data_urls(shape: &ImageShape, seed: u64) -> Vec<String> {
    (0..shape.count)
        .map(|i| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (u64::from(i) << 48) ^ 0x1a6e);
            let mut rgb = vec![0u8; shape.width as usize * shape.height as usize * 3];
            rng.fill_bytes(&mut rgb);
            let (mime, bytes) = match shape.format {
                ImageFormat::Png => ("image/png", png(shape.width, shape.height, &rgb)),
                ImageFormat::Bmp => ("image/bmp", bmp(shape.width, shape.height, &rgb)),
            };
            format!(
                "data:{mime};base64,{}",
                base64::engine::general_purpose::STANDARD.encode(bytes)
            )
        })
        .collect()
}

/// An 8-bit RGB PNG of `rgb` (rows top to bottom).
pub fn png(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let row = width as usize * 3;
    let mut raw = Vec::with_capacity((row + 1) * height as usize);
    for line in rgb.chunks(row.max(1)).take(height as usize) {
        raw.push(0); // filter: none
        raw.extend_from_slice(line);
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = z.write_all(&raw);
    let idat = z.finish().unwrap_or_default();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // depth 8, RGB, deflate, no filter set, no interlace
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &idat);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut h = crc32fast::Hasher::new();
    h.update(kind);
    h.update(data);
    out.extend_from_slice(&h.finalize().to_be_bytes());
}

/// A 24-bit BMP of `rgb` (rows top to bottom; BMP stores them bottom-up, BGR, each padded to
/// four bytes).
pub fn bmp(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let row = width as usize * 3;
    let stride = row.div_ceil(4) * 4;
    let pixels = stride * height as usize;
    let size = 54 + pixels;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(b"BM");
    out.extend_from_slice(&(size as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&54u32.to_le_bytes());
    out.extend_from_slice(&40u32.to_le_bytes()); // BITMAPINFOHEADER
    out.extend_from_slice(&(width as i32).to_le_bytes());
    out.extend_from_slice(&(height as i32).to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // planes
    out.extend_from_slice(&24u16.to_le_bytes()); // bits per pixel
    out.extend_from_slice(&[0; 4]); // no compression
    out.extend_from_slice(&(pixels as u32).to_le_bytes());
    out.extend_from_slice(&2835u32.to_le_bytes()); // 72 dpi
    out.extend_from_slice(&2835u32.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    for line in rgb.chunks(row.max(1)).take(height as usize).rev() {
        for px in line.chunks(3) {
            out.extend_from_slice(&[px[2], px[1], px[0]]);
        }
        out.resize(out.len() + (stride - row), 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_png_holds_its_pixels_and_valid_crcs() {
        let rgb: Vec<u8> = (0..2 * 3 * 3).map(|i| i as u8).collect();
        let p = png(2, 3, &rgb);
        assert_eq!(&p[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: length 13, width 2, height 3, depth 8, colour type 2.
        assert_eq!(&p[8..16], b"\0\0\0\x0dIHDR");
        assert_eq!(&p[16..24], &[0, 0, 0, 2, 0, 0, 0, 3]);
        assert_eq!(&p[24..26], &[8, 2]);
        let crc = crc32fast::hash(&p[12..29]);
        assert_eq!(&p[29..33], &crc.to_be_bytes());
        let len = u32::from_be_bytes(p[33..37].try_into().unwrap()) as usize;
        assert_eq!(&p[37..41], b"IDAT");
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(&p[41..41 + len])
            .read_to_end(&mut raw)
            .unwrap();
        assert_eq!(raw.len(), 3 * 7);
        assert_eq!(&raw[1..7], &rgb[..6]);
        assert!(p.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]));
    }

    #[test]
    fn a_bmp_is_bottom_up_bgr_and_padded() {
        let rgb = [1, 2, 3, 4, 5, 6]; // one row of two pixels, then nothing
        let b = bmp(1, 2, &rgb);
        assert_eq!(&b[..2], b"BM");
        assert_eq!(b.len(), 54 + 2 * 4);
        // Bottom row first: pixel (4, 5, 6) as BGR, padded to 4 bytes.
        assert_eq!(&b[54..58], &[6, 5, 4, 0]);
        assert_eq!(&b[58..62], &[3, 2, 1, 0]);
    }

    #[test]
    fn data_urls_are_seeded() {
        let shape = ImageShape {
            count: 2,
            width: 4,
            height: 4,
            format: ImageFormat::Png,
        };
        let a = data_urls(&shape, 7);
        assert_eq!(a.len(), 2);
        assert!(a[0].starts_with("data:image/png;base64,iVBORw0KGgo"));
        assert_eq!(a, data_urls(&shape, 7));
        assert_ne!(a[0], a[1]);
        assert_ne!(a, data_urls(&shape, 8));
    }
}
