// `ccotel install-telemetry --agent codex`: Codex's own OTel log events (codex.api_request, codex.tool_decision, …)
// sent to `ccotel run`'s receiver, which joins them to the rollouts' chats and calls (native-telemetry.ts). One
// marked block at the end of config.toml sets `[otel]`'s log exporter (otlp-http, protobuf) to the receiver's
// /v1/logs; prompts stay out unless asked (`log_user_prompt`). Where the user's own text sets `[otel]` already (a
// second table would make Codex refuse the file), install changes nothing and says what to set.
import { join } from 'node:path';
import type { InstallReport } from '../../install/options.js';
import { planTextChange } from '../../install/settings-file.js';
import { receiverUrl } from '../../install/telemetry.js';
import { withBlock, withoutBlock } from './config-block.js';
import { codexHomeOf, type CodexInstallOptions } from './install-hooks.js';

const TELEMETRY_BLOCK = "install-telemetry: Codex's own OTel log events go to ccotel run's receiver (ccotel uninstall-telemetry --agent codex removes this block)";

export interface CodexTelemetryOptions extends CodexInstallOptions {
  /** The receiver's port (native_telemetry_port). */
  port: number;
  /** Also the prompts' text (masked by ccotel). */
  logPrompts?: boolean;
}

/** Whether the user's own text defines the `otel` table (or a key of it). */
function setsOtel(text: string): boolean {
  return text.split('\n').some((line) => /^\s*\[\s*otel\s*[\].]/.test(line) || /^\s*otel\s*[.=]/.test(line));
}

/** The block's lines: Codex's log exporter pointed at the receiver. */
export function codexTelemetryLines(port: number, logPrompts = false): string[] {
  return ['[otel]', `log_user_prompt = ${logPrompts}`, '[otel.exporter.otlp-http]', `endpoint = ${JSON.stringify(`${receiverUrl(port)}/v1/logs`)}`, 'protocol = "binary"'];
}

function plan(options: CodexTelemetryOptions | CodexInstallOptions, install: boolean) {
  const configPath = join(codexHomeOf(options), 'config.toml');
  const warnings: string[] = [];
  const change = planTextChange(configPath, (text) => {
    if (!install || !('port' in options)) return withoutBlock(text, TELEMETRY_BLOCK);
    if (setsOtel(withoutBlock(text, TELEMETRY_BLOCK))) {
      warnings.push(`${configPath} sets [otel] itself: ccotel changed nothing; set [otel.exporter.otlp-http] endpoint = "${receiverUrl(options.port)}/v1/logs", protocol = "binary" there to send Codex's events to ccotel`);
      return text;
    }
    return withBlock(text, TELEMETRY_BLOCK, codexTelemetryLines(options.port, options.logPrompts));
  });
  return { change, warnings };
}

export function installCodexTelemetry(options: CodexTelemetryOptions): InstallReport {
  const { change, warnings } = plan(options, true);
  return { change, backupPath: options.dryRun ? undefined : change.apply(options.now), warnings };
}

export function uninstallCodexTelemetry(options: CodexInstallOptions): InstallReport {
  const { change, warnings } = plan(options, false);
  return { change, backupPath: options.dryRun ? undefined : change.apply(options.now), warnings };
}
