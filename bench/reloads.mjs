// 1,000 reloads through the admin API's POST /reload against a running `portico run`, sampling
// the server's RSS and its open file descriptors (/proc/PID/fd: sockets, files, timers' fds)
// every 100 reloads. Both must stay flat. With --tls, HTTPS with a certificate and two sni
// certificates, and a handshake for each name after every reload (issue 15 point 4).
// Usage: node bench/reloads.mjs [COUNT] [--tls] [--bin PATH]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect } from 'node:tls';

const args = process.argv.slice(2);
const tls = args.includes('--tls');
const binAt = args.indexOf('--bin');
const count = Number(args.find((a) => /^\d+$/.test(a)) ?? 1000);
const bin =
  binAt >= 0 ? args[binAt + 1] : fileURLToPath(new URL('../bin/portico.js', import.meta.url));
const fixtures = fileURLToPath(new URL('../test/fixtures/tls/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'portico-reloads-'));
mkdirSync(join(dir, 'www'));
writeFileSync(join(dir, 'www', 'index.html'), 'hello');
const port = 18690;
const admin = 18691;
const sport = 18692;
const secure = tls
  ? `  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${fixtures}server.crt\n  key: ${fixtures}server.key\n` +
    `  sni:\n    example.com:\n      cert: ${fixtures}example.com.crt\n      key: ${fixtures}example.com.key\n` +
    `    "*.example.org":\n      cert: ${fixtures}example.org.crt\n      key: ${fixtures}example.org.key\n`
  : '';
const config = (n) =>
  `global:\n  workers: 1\n  port: "127.0.0.1:${port}"\n${secure}  admin:\n    listen: "127.0.0.1:${admin}"\nhosts:\n  - domain: "site${n % 2}.test"\n    wwwroot: ${join(dir, 'www')}\n`;

/** One handshake per certificate, so each reload's contexts are used. */
async function handshakes() {
  for (const servername of ['localhost', 'example.com', 'shop.example.org'])
    await new Promise((resolve, reject) => {
      const socket = tlsConnect(
        { host: '127.0.0.1', port: sport, servername, rejectUnauthorized: false },
        () => {
          socket.end();
          resolve();
        },
      );
      socket.on('error', reject);
    });
}
writeFileSync(join(dir, 'portico.yaml'), config(0));
const child = spawn(bin, ['run', '-c', join(dir, 'portico.yaml')], {
  stdio: ['ignore', 'ignore', 'pipe'],
});
child.stderr.resume();

const rss = () =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
const fds = () => readdirSync(`/proc/${child.pid}/fd`).length;
async function reload() {
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await fetch(`http://127.0.0.1:${admin}/reload`, { method: 'POST' });
      if (r.status !== 200) throw new Error(`reload answered ${r.status}: ${await r.text()}`);
      return;
    } catch (e) {
      // The admin listener restarts after each reload; a request in that instant is retried.
      if (attempt > 50) throw e;
      await sleep(10);
    }
  }
}

try {
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(`http://127.0.0.1:${port}/`).then(
        () => true,
        () => false,
      )
    )
      break;
    await sleep(100);
  }
  const samples = [];
  for (let i = 1; i <= count; i++) {
    writeFileSync(join(dir, 'portico.yaml'), config(i));
    await reload();
    if (tls) await handshakes();
    if (i % 100 === 0) {
      samples.push({ reloads: i, rssMiB: Number(rss().toFixed(1)), fds: fds() });
      console.log(
        `after ${i} reloads: RSS ${samples.at(-1).rssMiB} MiB, ${samples.at(-1).fds} open fds`,
      );
    }
  }
  const first = samples[0];
  const last = samples.at(-1);
  console.log(
    `RSS ${first.rssMiB} → ${last.rssMiB} MiB (${(last.rssMiB - first.rssMiB).toFixed(1)}), fds ${first.fds} → ${last.fds}`,
  );
} finally {
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
