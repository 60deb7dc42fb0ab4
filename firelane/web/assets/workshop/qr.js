// A QR code as SVG squares, from the vendored qrcode-generator's module
// matrix (vendor/VERSIONS.md): no data URL and no inline markup.
import { html } from "../util.js";
import qrcode from "../vendor/qrcode.module.js";

export function QRCode({ text, size = 168, label }) {
  const qr = qrcode(0, "M"); // 0: the smallest version that holds the text
  qr.addData(text);
  qr.make();
  const count = qr.getModuleCount();
  const margin = 2;
  let d = "";
  for (let y = 0; y < count; y += 1) {
    for (let x = 0; x < count; x += 1) if (qr.isDark(y, x)) d += `M${x + margin} ${y + margin}h1v1h-1z`;
  }
  const side = count + margin * 2;
  return html`<svg class="ws-qr" role="img" aria-label=${label || "QR code of the link"} width=${size} height=${size} viewBox=${`0 0 ${side} ${side}`}
      shape-rendering="crispEdges" data-qr=${text}>
    <rect width=${side} height=${side} fill="#fff" /><path d=${d} fill="#000" /></svg>`;
}
