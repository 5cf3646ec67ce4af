// The viewer's third-party code, bundled into one script that sets window.tilescopeVendor.
// Only what the page uses is kept (esbuild tree-shakes the rest).
import hljs from "highlight.js/lib/core";
import python from "highlight.js/lib/languages/python";
import { interpolateTurbo, interpolateViridis, schemeTableau10 } from "d3-scale-chromatic";

hljs.registerLanguage("python", python);

window.tilescopeVendor = { hljs, interpolateTurbo, interpolateViridis, schemeTableau10 };
