/**
 * Images in OpenAI chat requests, for a served vision-language checkpoint (src/models/vision-lm.ts).
 *
 * A chat message's content may be a list of parts, `{type: "text", text}` and `{type: "image_url", image_url: {url}}`,
 * as OpenAI's vision requests send them. Each image part becomes the model's `<image>` placeholder at its place in the
 * message text (the vision tokenizer expands it to the image's tokens) and its image joins the request's image list,
 * in order. Only `data:` URLs with base64 PNG or JPEG bytes are taken: the server never fetches a URL (it may run
 * where nothing outside can be reached, and fetching on a client's behalf is a server-side request forgery hole).
 *
 * Every prompt is checked before it is queued: the image pad tokens in its ids must be exactly its images' tokens,
 * so a literal `<image>` typed into the text, an image sent to a text-only model, or pad ids in a token-id prompt are
 * a 400 naming the field, never a shape error inside a batch that other requests share.
 */
import { IMAGE_MARKER, VisionLanguageModel } from "../../models/vision-lm.js";
import type { Transformer } from "../../models/transformer.js";
import { decodeImage, type RgbImage } from "../../util/image.js";
import { badRequest } from "./errors.js";

/** One content part of a chat message, as the schema admits it. */
export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

/** Largest decoded image accepted from a request (bytes before decoding); the body limit bounds it too. */
const MAX_IMAGE_BYTES = 16 * 1024 * 1024;

const DATA_URL = /^data:image\/(png|jpeg|jpg);base64,/i;

/** Decodes a `data:image/png;base64,...` (or jpeg) URL; anything else is a 400 on `param`. */
export function imageFromUrl(url: string, param: string): RgbImage {
  const m = DATA_URL.exec(url);
  if (!m) {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1] ?? "none";
    throw badRequest(
      `${param}: only data:image/png or data:image/jpeg base64 URLs are accepted (scheme ${scheme}); this server does not fetch URLs`,
      param,
      "invalid_image_url",
    );
  }
  const b64 = url.slice(m[0].length).replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64))
    throw badRequest(`${param}: the base64 data is malformed`, param, "invalid_image");
  const bytes = Buffer.from(b64, "base64");
  if (bytes.length === 0) throw badRequest(`${param}: the image data is empty`, param, "invalid_image");
  if (bytes.length > MAX_IMAGE_BYTES)
    throw badRequest(`${param}: ${bytes.length} bytes of image is over ${MAX_IMAGE_BYTES}`, param, "invalid_image");
  try {
    return decodeImage(bytes, param);
  } catch (err) {
    throw badRequest((err as Error).message, param, "invalid_image");
  }
}

/** A message's content as text, with `<image>` where each image part was; its images in order. */
export function contentWithImages(
  content: string | readonly ContentPart[] | null | undefined,
  param: string,
): { text: string; images: RgbImage[] } {
  if (content === null || content === undefined) return { text: "", images: [] };
  if (typeof content === "string") return { text: content, images: [] };
  const images: RgbImage[] = [];
  const text = content
    .map((part, j) => {
      if (part.type === "text") return part.text;
      images.push(imageFromUrl(part.image_url.url, `${param}.${j}.image_url.url`));
      return IMAGE_MARKER;
    })
    .join("");
  return { text, images };
}

/**
 * Checks that `prompt` carries exactly the image tokens of `images` for `model`: none for a text-only model, and
 * tokensPerImage pads per image for a vision-language one. A 400 on `param` otherwise.
 */
export function checkImageTokens(model: Transformer, prompt: readonly number[], images: number, param: string): void {
  if (!(model instanceof VisionLanguageModel)) {
    if (images > 0)
      throw badRequest(`${param}: this model is text-only and takes no images`, param, "images_not_supported");
    return;
  }
  const per = model.visual.tokensPerImage;
  const pads = prompt.reduce((n, id) => n + (id === model.visionIds.pad ? 1 : 0), 0);
  if (pads !== images * per)
    throw badRequest(
      `${param}: the prompt has ${pads} image pad tokens (${per} per image) for ${images} image(s); send each image as an ` +
        `image_url part and do not write ${IMAGE_MARKER} or image token ids yourself`,
      param,
      "image_count_mismatch",
    );
}
