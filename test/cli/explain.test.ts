// `portico explain` through the real command line (bin/portico.js over dist/): the host, the
// location and why, the settings there and the stages in order, for a KDL file with conditional
// locations; nothing is started (an application that would leave a mark on import leaves none);
// a bad URL, bad arguments or a bad configuration are a message and exit 1 (usage: 2).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-explain-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const MARK = join(dir, 'imported');
writeFileSync(
  join(dir, 'app.py'),
  `open(${JSON.stringify(MARK)}, "w").close()\ndef application(environ, start_response):\n    return []\n`,
);
const FILE = join(dir, 'portico.kdl');
writeFileSync(
  FILE,
  `global {
    loadModules "rproxy" "wsgi"
}
host domain="example.com" {
    wwwroot "${dir}"
    location "/static" {
        customHeaders {
            Cache-Control "no-cache"
        }
    }
    location {
        pathRegex r"\\.css$"
        customHeaders {
            Cache-Control "public, max-age=31536000"
        }
    }
    location "/api" {
        matchMethods "POST" "PUT"
        proxyTo "http://127.0.0.1:9"
    }
    location "/api" {
        proxyTo "http://127.0.0.1:9"
        customHeaders {
            X-Api-Key "secret-key"
        }
    }
    location {
        matchHeaders {
            X-Debug "^1$"
        }
        wsgiApplicationPath "app.py"
    }
}
`,
);

const explain = (...args: string[]) => runCli(['explain', '-c', FILE, ...args]);
/** The output's lines by label (continuation lines join their label's). */
function fields(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  let label = '';
  for (const line of stdout.trimEnd().split('\n')) {
    const head = line.slice(0, 10).trim();
    if (head) label = head;
    out[label] = out[label] === undefined ? line.slice(10) : `${out[label]}\n${line.slice(10)}`;
  }
  return out;
}

describe('portico explain', () => {
  it('an extension location wins over the prefix location, and says so', async () => {
    const r = await explain('http://example.com/static/app.css');
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    const f = fields(r.stdout);
    assert.equal(f.request, 'GET http://example.com/static/app.css');
    assert.equal(f.host, `hosts[0] (${FILE}:4:1), by domain "example.com"`);
    assert.equal(
      f.location,
      `hosts[0].locations[1] (${FILE}:11:5), the first in file order whose conditions hold: pathRegex "\\\\.css$"; it wins over the longest prefix location, path "/static"`,
    );
    assert.match(f.settings!, /^customHeaders: \{"Cache-Control":"public, max-age=31536000"\}$/m);
    assert.equal(f.stages, 'trailingSlash → methodCheck → staticFiles → 404 when none answers');
    const plain = fields((await explain('http://example.com/static/a.txt')).stdout);
    assert.equal(
      plain.location,
      `hosts[0].locations[0] (${FILE}:6:5), the longest prefix: path "/static"`,
    );
  });

  it('--method and --header choose the conditional locations; module stages are named, not started', async () => {
    const [post, get, debug] = await Promise.all([
      explain('--method', 'POST', 'http://EXAMPLE.com:8080/api/items?x=1'),
      explain('http://example.com/api/items'),
      explain('--header', 'x-debug: 1', 'http://example.com/static/a.txt'),
    ]);
    const p = fields(post.stdout);
    assert.equal(p.request, 'POST http://example.com:8080/api/items?x=1');
    assert.match(
      p.location!,
      /^hosts\[0\]\.locations\[2\] .*: path "\/api", matchMethods POST, PUT; it wins over the longest prefix location, path "\/api"$/,
    );
    assert.equal(
      p.stages,
      'trailingSlash → dynamicCompression → rproxy (module) → endOfDynamicCompression → methodCheck → staticFiles → 404 when none answers',
    );
    const g = fields(get.stdout);
    assert.match(g.location!, /^hosts\[0\]\.locations\[3\] .*the longest prefix: path "\/api"$/);
    assert.match(
      g.settings!,
      /^customHeaders: \{"X-Api-Key":"\[redacted\]"\}$/m,
      'secrets are never shown',
    );
    assert.doesNotMatch(get.stdout, /secret-key/);
    const d = fields(debug.stdout);
    assert.match(
      d.location!,
      /^hosts\[0\]\.locations\[4\] .*: matchHeaders X-Debug "\^1\$"; it wins over the longest prefix location, path "\/static"$/,
    );
    assert.equal(
      d.stages,
      'trailingSlash → dynamicCompression → wsgi (module) → endOfDynamicCompression → methodCheck → staticFiles → 404 when none answers',
    );
    assert.equal(existsSync(MARK), false, 'the application was never imported');
  });

  it("no host or no location: the global configuration, the host's own settings", async () => {
    const [other, home, cleaned] = await Promise.all([
      explain('http://other.test/'),
      explain('http://example.com/'),
      explain('http://example.com/a/../%2e%2e/static/x.css'),
    ]);
    assert.equal(
      fields(other.stdout).host,
      'none matches "other.test": the global configuration answers',
    );
    assert.equal(fields(home.stdout).location, `none takes "/": the host's own settings apply`);
    const c = fields(cleaned.stdout);
    assert.equal(
      c.request,
      'GET http://example.com/static/x.css (sanitized from /a/../%2e%2e/static/x.css)',
    );
    assert.match(c.location!, /^hosts\[0\]\.locations\[1\] /);
  });

  it('a bad URL, method, header or configuration: a message and exit 1; a missing URL: usage, exit 2', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      'hosts:\n  - domain: example.com\n    locations:\n      - pathRegex: "(x"\n',
    );
    const results = await Promise.all([
      explain('ftp://example.com/'),
      explain('/relative'),
      explain('http://example.com/%00'),
      explain('--method', 'get', 'http://example.com/'),
      explain('--header', 'no colon', 'http://example.com/'),
      runCli(['explain', '-c', bad, 'http://example.com/']),
      runCli(['explain', '-c', FILE]),
      runCli(['validate', '-c', FILE, '--method', 'POST']),
    ]);
    const expected = [
      'portico explain: expected an http:// or https:// URL with a host, such as http://example.com/path, got "ftp://example.com/"\n',
      'portico explain: expected an http:// or https:// URL with a host, such as http://example.com/path, got "/relative"\n',
      'portico explain: the server refuses this path with 400: URL sanitation error: %00 in the path\n',
      'portico explain: --method: methods are case-sensitive and clients send "GET", not "get"\n',
      'portico explain: --header: expected "Name: value", got "no colon"\n',
      `${bad}:4:20: hosts[0].locations[0].pathRegex: invalid regular expression "(x": Unterminated group\nportico explain: ${bad}: configuration not valid\n`,
      'portico explain: expected one URL (see portico --help)\n',
      'portico validate: --method and --header are for explain (see portico --help)\n',
    ];
    results.forEach((r, i) => {
      assert.equal(r.stderr, expected[i], `case ${i}`);
      assert.equal(r.stdout, '', `case ${i}`);
      assert.equal(r.code, i < 6 ? 1 : 2, `case ${i}`);
    });
  });
});
