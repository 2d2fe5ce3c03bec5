// Runs a Python file under real MicroPython (the WebAssembly port) with the panel firmware
// files mounted at /fw, the way they sit on the Pico's flash.
// usage: node run.mjs FIRMWARE_DIR SCRIPT.py   (module resolved from NODE_PATH)
import fs from "fs";
import path from "path";
import { createRequire } from "module";

const require = createRequire(import.meta.url);
const [firmwareDir, script] = process.argv.slice(2);
const entry = require.resolve("@micropython/micropython-webassembly-pyscript/micropython.mjs", {
  paths: (process.env.NODE_PATH || "").split(path.delimiter).filter(Boolean),
});
const { loadMicroPython } = await import(entry);
const mp = await loadMicroPython({
  heapsize: 8 * 1024 * 1024,
  stdout: (t) => process.stdout.write(t + "\n"),
  stderr: (t) => process.stderr.write(t + "\n"),
});
mp.FS.mkdir("/fw");
for (const name of ["panelproto.py", "panelfw.py"]) {
  mp.FS.writeFile("/fw/" + name, fs.readFileSync(path.join(firmwareDir, name)));
}
try {
  mp.runPython(fs.readFileSync(script, "utf8"));
} catch (err) {
  process.stderr.write(String(err) + "\n");
  process.exit(1);
}
