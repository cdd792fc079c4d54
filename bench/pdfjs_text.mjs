// pdf.js's text layer of a PDF, for bench/bench_pdf_text.py: one JSON line per page,
// {"page": N, "text": ...}, the page's text items joined as the viewer's text layer lays
// them out (getTextContent with disableNormalization, as pdf.js's TextLayer asks for it;
// an item's hasEOL ends a line).
//
//   node bench/pdfjs_text.mjs PDFJS_DIST_DIR FILE.pdf
//
// PDFJS_DIST_DIR is an unpacked pdfjs-dist package (npm pack pdfjs-dist); its legacy build
// runs in Node. Text extraction draws nothing, so the canvas classes the module looks for
// when it loads are stubbed.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

globalThis.DOMMatrix ??= class DOMMatrix {};
globalThis.ImageData ??= class ImageData {};
globalThis.Path2D ??= class Path2D {};

const [dir, file] = process.argv.slice(2);
const pdfjs = await import(pathToFileURL(`${dir}/legacy/build/pdf.mjs`).href);
const doc = await pdfjs.getDocument({
  data: new Uint8Array(readFileSync(file)),
  verbosity: 0,
  standardFontDataUrl: `${dir}/standard_fonts/`,
  cMapUrl: `${dir}/cmaps/`,
  cMapPacked: true,
}).promise;
for (let number = 1; number <= doc.numPages; number++) {
  const page = await doc.getPage(number);
  const content = await page.getTextContent({ disableNormalization: true });
  const text = content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join("");
  process.stdout.write(`${JSON.stringify({ page: number, text })}\n`);
  page.cleanup();
}
await doc.destroy();
