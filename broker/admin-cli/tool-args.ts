/**
 * Command-line options of the admin tools, in the style of Kafka's tools (joptsimple): `--name
 * value` or `--name=value`, flags without a value, repeatable options collected in order. An
 * unknown option, a missing value or a value given to a flag is a ToolError naming it.
 */
import { ToolError } from './admin-connection';

export interface OptionSpec {
  /** Takes a value (default) or is a flag. */
  flag?: boolean;
  /** May be given more than once. */
  repeatable?: boolean;
}

export class ParsedArgs {
  constructor(private readonly values: ReadonlyMap<string, string[]>) {}

  has(name: string): boolean {
    return this.values.has(name);
  }

  get(name: string): string | undefined {
    const v = this.values.get(name);
    return v === undefined ? undefined : v[v.length - 1];
  }

  all(name: string): string[] {
    return this.values.get(name) ?? [];
  }

  /** The value of an option that must be given. */
  need(name: string, why: string): string {
    const v = this.get(name);
    if (v === undefined) throw new ToolError(`${name} is required ${why}`);
    return v;
  }

  int(name: string, min: number, max: number): number | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    if (!/^-?\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new ToolError(`invalid ${name} ${v} (an integer from ${min} to ${max})`);
    return Number(v);
  }
}

export function parseToolArgs(argv: readonly string[], specs: Readonly<Record<string, OptionSpec>>): ParsedArgs {
  const values = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf('=');
    const [name, inline] = a.startsWith('--') && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    const spec = specs[name];
    if (!spec) throw new ToolError(a.startsWith('--') ? `unknown option ${name}` : `unexpected argument ${JSON.stringify(a)}`);
    let value: string;
    if (spec.flag) {
      if (inline !== undefined) throw new ToolError(`${name} takes no value`);
      value = '';
    } else if (inline !== undefined) {
      value = inline;
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new ToolError(`${name} needs a value`);
      value = next;
      i++;
    }
    const list = values.get(name);
    if (list && !spec.repeatable && !spec.flag) throw new ToolError(`${name} given twice`);
    if (list) list.push(value);
    else values.set(name, [value]);
  }
  return new ParsedArgs(values);
}

/** `k=v,k2=v2` (Kafka's --config / --add-config lists); values may contain '=' but not ','. */
export function parseConfigPairs(args: readonly string[], option: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const arg of args) {
    for (const part of arg.split(',')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      if (eq <= 0) throw new ToolError(`invalid ${option} ${JSON.stringify(part)} (expected key=value)`);
      out.set(part.slice(0, eq).trim(), part.slice(eq + 1));
    }
  }
  return out;
}
