/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and lists where the time went: self time per function
 * and per source area (krill's own folders, node internals, dependencies, GC, idle).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface HotSpot {
  name: string;
  location: string;
  selfMs: number;
  /** Share of the busy (non-idle) time. */
  pct: number;
}

export interface ProfileSummary {
  file: string;
  /** Whether only samples inside the measured workloads' time windows were counted. */
  windowed: boolean;
  totalMs: number;
  busyMs: number;
  functions: HotSpot[];
  areas: HotSpot[];
}

function area(url: string, fn: string): string {
  if (url === '') {
    if (fn === '(garbage collector)') return '(garbage collector)';
    if (fn === '(idle)') return '(idle)';
    if (fn === '(program)') return '(program: native, not attributed)';
    return '(native)';
  }
  if (url.startsWith('node:')) return 'node internals';
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return `node_modules/${m[1]}`;
  const d = /\/dist\/([^/]+)\//.exec(url);
  if (d) return `krill ${d[1]}/`;
  return url;
}

function shortLocation(url: string, line: number): string {
  if (url === '') return '';
  const d = /\/dist\/(.*)$/.exec(url);
  const p = d ? d[1] : url.startsWith('node:') ? url : path.basename(url);
  return `${p}:${line + 1}`;
}

/**
 * `windows` (optional): [start, end] pairs in microseconds of the monotonic clock (process.hrtime
 * in any process on the machine: V8 stamps profiles with the same clock); only samples taken inside
 * them are counted, so start-up, topic creation and shutdown stay out of a workload's profile.
 */
export function summarizeProfile(file: string, top = 15, windows: readonly (readonly [number, number])[] = []): ProfileSummary {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  for (const n of prof.nodes) byId.set(n.id, n);
  const selfUs = new Map<number, number>();
  const inWindow = (t: number): boolean => windows.length === 0 || windows.some(([a, b]) => t >= a && t <= b);
  let t = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    if (!inWindow(t)) continue;
    const dt = prof.timeDeltas[i + 1] ?? 0; // a sample's duration is the delta to the next one
    selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + dt);
  }
  const fns = new Map<string, HotSpot>();
  const areas = new Map<string, HotSpot>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const name = functionName || '(anonymous)';
    total += us;
    if (name === '(idle)') idle += us;
    const key = `${name}@${url}:${lineNumber}`;
    const f = fns.get(key) ?? { name, location: shortLocation(url, lineNumber), selfMs: 0, pct: 0 };
    f.selfMs += us / 1000;
    fns.set(key, f);
    const a = area(url, name);
    const ah = areas.get(a) ?? { name: a, location: '', selfMs: 0, pct: 0 };
    ah.selfMs += us / 1000;
    areas.set(a, ah);
  }
  const busyMs = (total - idle) / 1000;
  const finish = (xs: Iterable<HotSpot>): HotSpot[] =>
    [...xs]
      .filter((x) => x.name !== '(idle)')
      .map((x) => ({ ...x, selfMs: Math.round(x.selfMs), pct: busyMs > 0 ? Math.round((1000 * x.selfMs) / busyMs) / 10 : 0 }))
      .sort((a, b) => b.selfMs - a.selfMs);
  return { file, windowed: windows.length > 0, totalMs: Math.round(total / 1000), busyMs: Math.round(busyMs), functions: finish(fns.values()).slice(0, top), areas: finish(areas.values()) };
}

if (require.main === module) {
  for (const f of process.argv.slice(2)) console.log(JSON.stringify(summarizeProfile(f, 25), null, 2));
}
