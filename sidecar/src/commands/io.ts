/** What a command reads from and writes to; tests pass their own (temp HOME, captured output). */
export interface CommandIo {
  env: Record<string, string | undefined>;
  out(text: string): void;
}

export const processIo: CommandIo = {
  env: process.env,
  out: (text) => void process.stdout.write(text),
};
