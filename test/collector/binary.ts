// Finds the collector that collector-config/build.sh built for the current manifest.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const collectorConfigDir = join(repoRoot, 'collector-config');

/** Where build.sh keeps its binaries; the same override it honours. */
function cacheDir(): string {
  return process.env.CCOTEL_COLLECTOR_CACHE ?? join(repoRoot, '.cache', 'otelcol-ccotel');
}

/**
 * The binary's path, or undefined when it has not been built for this exact manifest.
 * build.sh names the folder by the first 16 hex digits of the manifest's SHA-256.
 */
export function collectorBinary(): string | undefined {
  const manifest = readFileSync(join(collectorConfigDir, 'builder-config.yaml'));
  const key = createHash('sha256').update(manifest).digest('hex').slice(0, 16);
  const binary = join(cacheDir(), key, 'otelcol-ccotel');
  return existsSync(binary) ? binary : undefined;
}

/** Like collectorBinary, but throws the instruction a developer needs when it is missing. */
export function requireCollectorBinary(): string {
  const binary = collectorBinary();
  if (binary === undefined) {
    throw new Error(
      'The ccotel collector binary is not built for the current collector-config/builder-config.yaml. ' +
        'Run `bash collector-config/build.sh` (a few minutes the first time; CI runs it before the tests).',
    );
  }
  return binary;
}
