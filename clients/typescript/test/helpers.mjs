// Starts the real contextd binary for the tests: CONTEXTD_BIN, or the
// repository's bin/contextd (make test-ts builds it).
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/** Runs contextd with the given agents.yaml text; returns {url, stop}. */
export async function startContextd(config = "") {
  const bin = process.env.CONTEXTD_BIN || join(repo, "bin", "contextd");
  if (!existsSync(bin)) throw new Error(`contextd binary not found at ${bin}: run make build (make test-ts does)`);
  const work = mkdtempSync(join(tmpdir(), "contextd-ts-"));
  const args = ["serve"];
  if (config) {
    writeFileSync(join(work, "agents.yaml"), config);
    args.push("--config", join(work, "agents.yaml"));
  }
  const port = await freePort();
  const proc = spawn(bin, args, { cwd: work, env: { ...process.env, CONTEXTD_ADDR: `127.0.0.1:${port}` }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(url + "/healthz")).ok) {
        return {
          url,
          async stop() {
            proc.kill("SIGTERM");
            await new Promise((r) => (proc.exitCode !== null ? r() : proc.once("exit", r)));
            rmSync(work, { recursive: true, force: true });
          },
        };
      }
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  proc.kill();
  throw new Error("contextd did not start: " + stderr);
}

/** A base URL where nothing listens: every call is refused. */
export async function downURL() {
  return `http://127.0.0.1:${await freePort()}`;
}
