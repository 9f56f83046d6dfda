// The listeners of a running server, by the address each binds (a TCP address or a Unix socket's
// path), and what a reload changes of them: addresses to bind, addresses to let go, and addresses
// kept whose protocol changes (HTTP/2, client certificates, h2c or PROXY headers switched, HTTP to
// HTTPS), which keep their socket and get a new protocol server while the old one drains its
// connections. A reload's changes are made off to the side and either committed or discarded, so a
// failure leaves the running listeners as they were.
import type { IpList } from '../http/ip-list.js';
import type { Plan } from '../plan/compile.js';
import type { ListenerSpec } from '../plan/listener-spec.js';
import { bindingOf, Listener } from './listener.js';
import { ProtocolServer, type ConnectionLimits, type Dispatch } from './protocol-server.js';
import { addTraffic, type Traffic } from './traffic.js';
import { OnceAMinute } from './once-a-minute.js';
import type { Refusal } from './refusals.js';

export interface ListenerSetup {
  readonly dispatch: Dispatch;
  /** Connection time limits in place of the configuration's (tests). */
  readonly limits: ConnectionLimits | undefined;
  /** A request refused before it was parsed, for the access log. */
  readonly onRefused: (refusal: Refusal) => void;
  readonly log: (message: string) => void;
}

/** A reload's new listeners and protocol servers, made but not yet serving the new Plan alone. */
export interface ListenerReload {
  /**
   * The new listeners are kept, the removed ones and the replaced protocol servers drain within
   * `graceMs` in the background: `retire` is handed each drain.
   */
  commit(graceMs: number, retire: (draining: Promise<unknown>) => void): void;
  /** Undoes what was made: the new listeners close, the new protocol servers go. */
  discard(): Promise<void>;
}

export class ListenerSet {
  private readonly listeners = new Map<string, Listener>();
  /** Listeners a reload removed, still closing, and what those that closed carried. */
  private readonly leaving = new Set<Listener>();
  private readonly left: Traffic = { received: 0, sent: 0 };
  /** The peers that may send a PROXY header, as the current Plan says. */
  private proxyPeers: IpList | undefined;
  private readonly refusedConnections: OnceAMinute;

  constructor(private readonly setup: ListenerSetup) {
    this.refusedConnections = new OnceAMinute(setup.log);
  }

  /** Listener ids (`http://*:8080`) with the port actually bound. */
  get urls(): string[] {
    return [...this.listeners.values()].map((l) => l.url);
  }

  get connections(): number {
    let n = 0;
    for (const l of this.listeners.values()) n += l.connections;
    return n;
  }

  /** Bytes received from and sent to clients, over every listener there has been. */
  traffic(): Traffic {
    const total: Traffic = { ...this.left };
    for (const l of [...this.listeners.values(), ...this.leaving]) addTraffic(total, l.traffic());
    return total;
  }

  /** A listener a reload removed: closed, its traffic kept in the totals. */
  private leave(l: Listener, graceMs: number): ReturnType<Listener['close']> {
    this.leaving.add(l);
    const closing = l.close(graceMs);
    const gone = () => {
      this.leaving.delete(l);
      addTraffic(this.left, l.traffic());
    };
    void closing.then(gone, gone);
    return closing;
  }

  /** The most connections open at once since the last call, over every listener. */
  takePeak(): number {
    let n = 0;
    for (const l of this.listeners.values()) n += l.takePeak();
    return n;
  }

  /** Binds the Plan's listeners, every one or none. */
  async open(plan: Plan): Promise<void> {
    this.proxyPeers = plan.proxyPeers;
    for (const l of await this.bind(plan.listeners, plan)) this.listeners.set(bindingOf(l.spec), l);
  }

  /** Binds what the Plan adds and makes the protocol servers it changes; nothing else changes yet. */
  async prepare(plan: Plan): Promise<ListenerReload> {
    const wanted = new Map(plan.listeners.map((s) => [bindingOf(s), s]));
    const added = plan.listeners.filter((s) => !this.listeners.has(bindingOf(s)));
    const removed = [...this.listeners]
      .filter(([binding]) => !wanted.has(binding))
      .map(([, l]) => l);
    // Made before anything changes: it can fail.
    const replaced: [Listener, ProtocolServer][] = [];
    const discardReplaced = () => Promise.all(replaced.map(([, p]) => p.drain(0)));
    let opened: Listener[];
    try {
      for (const [binding, l] of this.listeners) {
        const spec = wanted.get(binding);
        if (spec && spec.key !== l.spec.key) replaced.push([l, this.protocolServer(spec, plan)]);
      }
      opened = await this.bind(added, plan);
    } catch (e) {
      await discardReplaced();
      throw e;
    }
    return {
      commit: (graceMs, retire) => {
        for (const l of opened) this.listeners.set(bindingOf(l.spec), l);
        for (const l of removed) this.listeners.delete(bindingOf(l.spec));
        for (const l of removed) retire(this.leave(l, graceMs));
        for (const [l, protocol] of replaced) retire(l.replace(protocol, graceMs));
      },
      discard: async () => {
        await Promise.all(opened.map((l) => l.close(0)));
        await discardReplaced();
      },
    };
  }

  /** The Plan's certificates and connection limits, for every listener and open connection. */
  update(plan: Plan): void {
    this.proxyPeers = plan.proxyPeers;
    if (plan.tls) for (const l of this.listeners.values()) l.updateTls(plan.tls);
    const limits = this.connectionLimits(plan);
    for (const l of this.listeners.values()) {
      l.updateLimits(limits, plan.global.maxConnections);
      l.updateHttp2(plan.http2Settings);
      void l.updateSocketMode(plan.global.socketMode, this.setup.log);
    }
  }

  /** Closes every listener within `graceMs`; resolves with how many connections that cut. */
  async close(graceMs: number): Promise<number> {
    const cut = await Promise.all([...this.listeners.values()].map((l) => l.close(graceMs)));
    this.listeners.clear();
    return cut.reduce((a, b) => a + b, 0);
  }

  private protocolServer(spec: ListenerSpec, plan: Plan): ProtocolServer {
    const { dispatch, onRefused } = this.setup;
    return new ProtocolServer(spec, dispatch, this.connectionLimits(plan), plan.tls, onRefused, {
      http2Settings: plan.http2Settings,
      // A Unix-socket peer is whoever socketMode lets connect.
      trusts: (peer) => peer === undefined || (this.proxyPeers?.has(peer) ?? false),
      refusedConnection: (reason) => this.refusedConnections.say(reason),
    });
  }

  /** The configuration's connection limits; a test's own (Server options) take precedence. */
  private connectionLimits(plan: Plan): ConnectionLimits {
    const g = plan.global;
    const http2 = g.http2Settings;
    return {
      headersTimeoutMs: g.requestHeaderTimeout,
      requestTimeoutMs: g.requestTimeout,
      keepAliveTimeoutMs: g.keepAliveTimeout,
      // Checked this often: a tenth of the head's limit, within 25 ms and 2 s.
      checkIntervalMs: Math.min(2000, Math.max(25, Math.floor(g.requestHeaderTimeout / 10))),
      sendTimeoutMs: g.sendTimeout,
      ...(http2?.idleTimeout === undefined ? {} : { http2IdleMs: http2.idleTimeout }),
      ...(http2?.pingTimeout === undefined ? {} : { http2LivenessMs: http2.pingTimeout }),
      ...this.setup.limits,
    };
  }

  /** Binds every spec or none. */
  private async bind(specs: readonly ListenerSpec[], plan: Plan): Promise<Listener[]> {
    const opened: Listener[] = [];
    try {
      for (const spec of specs) {
        const listener = new Listener(this.protocolServer(spec, plan), {
          maxConnections: plan.global.maxConnections,
          log: this.setup.log,
          socketMode: plan.global.socketMode,
        });
        await listener.start();
        opened.push(listener);
      }
      return opened;
    } catch (e) {
      await Promise.all(opened.map((l) => l.close(0)));
      throw e;
    }
  }
}
