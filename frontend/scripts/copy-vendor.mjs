// Copies the browser bundles of the npm dependencies into static/vendor/,
// where Django's static files serve them. Run by `npm ci` (postinstall) and `npm run build`.
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const vendor = join(root, "static", "vendor");
const files = [
  ["node_modules/socket.io-client/dist/socket.io.min.js", "socket.io.min.js"],
  ["node_modules/socket.io-client/dist/socket.io.min.js.map", "socket.io.min.js.map"],
  // Turns and conclusions are Markdown: parsed by markdown-it, sanitized by DOMPurify.
  ["node_modules/markdown-it/dist/markdown-it.min.js", "markdown-it.min.js"],
  ["node_modules/dompurify/dist/purify.min.js", "purify.min.js"],
  ["node_modules/dompurify/dist/purify.min.js.map", "purify.min.js.map"],
];

mkdirSync(vendor, { recursive: true });
for (const [from, to] of files) {
  const source = join(root, from);
  if (!existsSync(source)) {
    console.error(`copy-vendor: missing ${from}; run npm ci in frontend/ first`);
    process.exit(1);
  }
  copyFileSync(source, join(vendor, to));
  console.log(`copy-vendor: static/vendor/${to}`);
}
