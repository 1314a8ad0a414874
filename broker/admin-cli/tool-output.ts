/**
 * Where an admin tool writes: one call per line, stdout for results and stderr for notes and
 * errors (Kafka's tools print "Error while executing ..." on stdout; each command decides).
 * The CLI writes to the process streams; tests collect the lines.
 */
export interface ToolOutput {
  stdout(line: string): void;
  stderr(line: string): void;
}

export const PROCESS_OUTPUT: ToolOutput = {
  stdout: (line) => void process.stdout.write(line + '\n'),
  stderr: (line) => void process.stderr.write(line + '\n'),
};

/** Collects lines (tests). */
export class CollectedOutput implements ToolOutput {
  readonly out: string[] = [];
  readonly err: string[] = [];
  stdout(line: string): void {
    this.out.push(line);
  }
  stderr(line: string): void {
    this.err.push(line);
  }
}
