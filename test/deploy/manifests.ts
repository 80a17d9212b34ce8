// Reads every Kubernetes manifest under deploy/kubernetes/ as parsed documents, for the checks in
// kubernetes.test.ts. Collector config overlays (collector/) and schemas/ are not manifests.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KUBERNETES_DIR } from '../../deploy/kubernetes/render.js';

export interface Manifest {
  /** Path relative to deploy/kubernetes. */
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

const NOT_MANIFESTS = new Set(['collector', 'schemas']);

export function manifestFiles(dir = KUBERNETES_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return NOT_MANIFESTS.has(entry.name) ? [] : manifestFiles(path);
    return entry.name.endsWith('.yaml') ? [relative(KUBERNETES_DIR, path)] : [];
  });
}

/** Every document of every manifest file; throws on any YAML error or warning. */
export function loadManifests(): Manifest[] {
  return manifestFiles().flatMap((file) =>
    parseAllDocuments(readFileSync(join(KUBERNETES_DIR, file), 'utf8')).map((document, index) => {
      const problems = [...document.errors, ...document.warnings];
      if (problems.length > 0) throw new Error(`${file} document ${index + 1}: ${problems.map((p) => p.message).join('; ')}`);
      return { ...(document.toJS({ maxAliasCount: 100 }) as Omit<Manifest, 'file'>), file } as Manifest;
    }),
  );
}
