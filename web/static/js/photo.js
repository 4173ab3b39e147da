// What a photo travels as: downscaled in the browser to the long side the reader works at
// (/api/info's photo_long_side: the reader never looks at more pixels than that), turned
// upright (the EXIF orientation applied), as JPEG. A photo the browser cannot decode (HEIC on
// some browsers) or one no larger than that goes as it was chosen: the server reads it, or
// says why it cannot.

export const JPEG_QUALITY = 0.9;

export async function preparePhoto(file, longSide) {
  if (!longSide || typeof createImageBitmap !== "function") return file;
  let bitmap;
  try {
    bitmap = await createImageBitmap(file, { imageOrientation: "from-image" });
  } catch (err) {
    return file; // not decodable here: the original, untouched
  }
  try {
    const long = Math.max(bitmap.width, bitmap.height);
    if (long <= longSide) return file;
    const k = longSide / long;
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(bitmap.width * k);
    canvas.height = Math.round(bitmap.height * k);
    const context = canvas.getContext("2d");
    context.imageSmoothingEnabled = true;
    context.imageSmoothingQuality = "high";
    context.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", JPEG_QUALITY));
    if (!blob || blob.size >= file.size) return file;
    return new File([blob], jpegName(file.name), { type: "image/jpeg" });
  } finally {
    bitmap.close();
  }
}

function jpegName(name) {
  return `${(name || "photo").replace(/\.[^.]*$/, "")}.jpg`;
}
