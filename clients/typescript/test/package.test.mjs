// What is published: the README's examples as tested, no runtime
// dependencies, every entry point with its types.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const read = (p) => readFileSync(join(root, p), "utf8");

test("the README shows each example file verbatim", () => {
  const blocks = [...read("README.md").matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  for (const f of ["examples/ai-sdk.mjs", "examples/openai-agents.mjs"]) {
    assert.ok(blocks.includes(read(f)), `README.md has no js block identical to ${f}`);
  }
});

test("no runtime dependencies; every export has its .js and .d.ts", () => {
  const pkg = JSON.parse(read("package.json"));
  assert.equal(pkg.dependencies, undefined);
  assert.equal(pkg.type, "module");
  for (const [entry, { types, default: js }] of Object.entries(pkg.exports)) {
    assert.ok(existsSync(join(root, types)), `${entry}: ${types} missing (npm run build)`);
    assert.ok(existsSync(join(root, js)), `${entry}: ${js} missing`);
  }
  for (const f of readdirSync(join(root, "dist")).filter((f) => f.endsWith(".js"))) {
    for (const [, spec] of read(join("dist", f)).matchAll(/^\s*(?:import|export)\s[^'"]*from\s+["']([^"']+)["']/gm)) {
      assert.ok(spec.startsWith("./"), `dist/${f} imports ${spec} at run time`);
    }
  }
});

test("engines: the package states the Node it needs, and Node 20 satisfies it", () => {
  const range = JSON.parse(read("package.json")).engines?.node;
  assert.ok(range, "package.json states no engines.node");
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  assert.ok(m, `engines.node "${range}": state it as >=MAJOR[.MINOR[.PATCH]]`);
  const floor = m.slice(1).map((x) => Number(x ?? 0));
  assert.ok(floor[0] < 20 || (floor[0] === 20 && floor[1] === 0 && floor[2] === 0), `engines.node "${range}" leaves out Node 20`);
  const running = process.versions.node.split(".").map(Number);
  const cmp = running[0] - floor[0] || running[1] - floor[1] || running[2] - floor[2];
  assert.ok(cmp >= 0, `Node ${process.versions.node} does not satisfy engines.node "${range}"`);
});
