// Build src/tilescope/viewer/static/vendor.js and LICENSES.txt from the pinned npm packages.
// Usage: npm ci && npm run build   (the output is committed; a pip install needs no node)
import { build } from "esbuild";
import { readFileSync, writeFileSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "src", "tilescope", "viewer", "static");
const lock = JSON.parse(readFileSync(join(here, "package-lock.json"), "utf8"));

await build({
  entryPoints: [join(here, "vendor-entry.mjs")],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  legalComments: "none",
  outfile: join(out, "vendor.js"),
  banner: { js: "/* tilescope viewer vendor bundle: highlight.js (BSD-3-Clause), d3-scale-chromatic, " +
                  "d3-color, d3-interpolate (ISC). Licences: LICENSES.txt. Built by frontend/build.mjs. */" },
});

// every package that ends up in the bundle (runtime dependencies, not the build tool)
const shipped = Object.entries(lock.packages)
  .filter(([path, info]) => path.startsWith("node_modules/") && !info.dev)
  .map(([path, info]) => ({ name: path.slice("node_modules/".length), version: info.version, license: info.license }));
let text = "Third-party code in vendor.js (versions from frontend/package-lock.json)\n\n";
for (const p of shipped) {
  const dir = join(here, "node_modules", p.name);
  const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  text += `==== ${p.name} ${p.version} (${p.license}) ====\n\n`;
  text += file ? readFileSync(join(dir, file), "utf8").trim() + "\n\n" : "(no licence file in the package)\n\n";
}
writeFileSync(join(out, "LICENSES.txt"), text);
console.log(`vendor.js and LICENSES.txt written for: ${shipped.map((p) => `${p.name}@${p.version}`).join(", ")}`);
