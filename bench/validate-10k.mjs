// How long `portico validate` takes on a 10,000-host YAML file (the target is under 2 s).
// Runs the real command three times on a generated file and prints each wall time and the best.
// Usage: npm run build && node bench/validate-10k.mjs [HOSTS]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const hosts = Number(process.argv[2] ?? 10_000);
const bin = fileURLToPath(new URL('../bin/portico.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'portico-bench-'));
const file = join(dir, 'portico.yaml');

const lines = ['global:', '  port: 8080', '  loadModules: [rproxy, cache]', 'hosts:'];
for (let i = 0; i < hosts; i++) {
  lines.push(
    `  - domain: site${i}.example.com`,
    `    wwwroot: /srv/www/site${i}`,
    '    customHeaders:',
    `      X-Site: "site-${i}"`,
    '    rewriteMap:',
    `      - regex: "^/old${i}/(.*)"`,
    '        replacement: /new/$1',
    '    locations:',
    '      - path: /api',
    `        proxyTo: http://127.0.0.1:${3000 + (i % 1000)}`,
  );
}
writeFileSync(file, `${lines.join('\n')}\n`);

const times = [];
for (let run = 0; run < 3; run++) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [bin, 'validate', '-c', file], { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) {
    console.error(result.stderr);
    process.exit(1);
  }
  times.push(ms);
  console.log(
    `run ${run + 1}: ${ms.toFixed(0)} ms (${hosts} hosts, ${lines.length} lines, whole process)`,
  );
}
console.log(`best: ${Math.min(...times).toFixed(0)} ms`);
rmSync(dir, { recursive: true, force: true });
