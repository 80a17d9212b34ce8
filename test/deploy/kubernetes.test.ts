// deploy/kubernetes/: every document parses and validates against its schema (Kubernetes' own from
// kubernetes-models, the operator's custom resources against deploy/kubernetes/schemas/), the names
// the objects use to find each other resolve, the generated parts are fresh, and the collector
// configs the pods load are valid collector configs with the environment the pods set.
import { Ajv } from 'ajv';
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { KUBERNETES_DIR, renderGenerated } from '../../deploy/kubernetes/render.js';
import { collectorBinary } from '../collector/binary.js';
import { startCollector } from '../collector/collector-process.js';
import { loadManifests, manifestFiles, type Manifest } from './manifests.js';
import { skipWithout } from '../helpers/real-parts.js';

const manifests = loadManifests();

type Validated = { validate(): void };
type ModelClass = new (data: unknown) => Validated;

/** The kubernetes-models class for an apiVersion/kind, e.g. apps/v1 Deployment → kubernetes-models/apps/v1/Deployment. */
async function modelFor(apiVersion: string, kind: string): Promise<ModelClass> {
  const module = (await import(/* @vite-ignore */ `kubernetes-models/${apiVersion}/${kind}`)) as Record<string, ModelClass>;
  return module[kind]!;
}

const CUSTOM_SCHEMAS: Record<string, string> = {
  'clickhouse.altinity.com/v1 ClickHouseInstallation': 'clickhouseinstallation.schema.json',
  'clickhouse-keeper.altinity.com/v1 ClickHouseKeeperInstallation': 'clickhousekeeperinstallation.schema.json',
};
const ajv = new Ajv({ allErrors: true, allowUnionTypes: true });

function byKind(kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata?.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/kubernetes`);
  return found;
}

interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; configMap?: { name: string } }[];
}
interface Container {
  name: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  volumeMounts?: { name: string; mountPath: string; subPath?: string }[];
}
const podSpecOf = (m: Manifest) => (m.spec as { template?: { spec?: PodSpec } } | undefined)?.template?.spec;
const workloads = manifests.filter((m) => podSpecOf(m) !== undefined);
const allContainers = (spec: PodSpec) => [...(spec.initContainers ?? []), ...spec.containers];

describe('Kubernetes manifests', () => {
  it('hold the pieces of the deployment', () => {
    const names = manifests.map((m) => `${m.kind}/${m.metadata?.name}`);
    for (const expected of [
      'Deployment/ccotel-gateway', 'Service/ccotel-gateway', 'Service/ccotel-gateway-headless', 'HorizontalPodAutoscaler/ccotel-gateway',
      'ConfigMap/ccotel-gateway-config', 'Deployment/ccotel-scale-out', 'Service/ccotel-scale-out', 'ConfigMap/ccotel-scale-out-config',
      'ClickHouseInstallation/ccotel', 'ClickHouseKeeperInstallation/ccotel-keeper', 'Job/ccotel-clickhouse-schema', 'ConfigMap/ccotel-clickhouse-schema',
      'Deployment/ccotel-grafana', 'ConfigMap/ccotel-grafana-provisioning', 'ConfigMap/ccotel-grafana-dashboards', 'ConfigMap/ccotel-grafana-alerts',
      'Deployment/claude-agent', 'DaemonSet/ccotel-node',
    ]) expect(names).toContain(expected);
  });

  it('validate against the Kubernetes schemas, and the custom resources against theirs', async () => {
    const failures: string[] = [];
    for (const manifest of manifests) {
      const { file, ...object } = manifest;
      const where = `${file}: ${manifest.kind}/${manifest.metadata?.name}`;
      const custom = CUSTOM_SCHEMAS[`${manifest.apiVersion} ${manifest.kind}`];
      try {
        if (manifest.kind === 'Kustomization') continue; // checked below
        if (custom) {
          const validate = ajv.compile(JSON.parse(readFileSync(join(KUBERNETES_DIR, 'schemas', custom), 'utf8')));
          if (!validate(object)) failures.push(`${where}: ${ajv.errorsText(validate.errors)}`);
          const templates = (object.spec as { templates?: { podTemplates?: { spec: unknown }[]; volumeClaimTemplates?: { spec: unknown }[] } } | undefined)?.templates;
          for (const pod of templates?.podTemplates ?? []) new (await modelFor('v1', 'PodSpec'))(pod.spec).validate();
          for (const claim of templates?.volumeClaimTemplates ?? []) new (await modelFor('v1', 'PersistentVolumeClaimSpec'))(claim.spec).validate();
        } else {
          new (await modelFor(manifest.apiVersion, manifest.kind))(object).validate();
        }
      } catch (error) {
        failures.push(`${where}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('the validation catches a broken manifest (schema check is live)', async () => {
    const gateway = structuredClone(byKind('Deployment', 'ccotel-gateway'));
    const { file: _file, ...object } = gateway;
    (object.spec as { replicas: unknown }).replicas = 'two';
    await expect((async () => new (await modelFor('apps/v1', 'Deployment'))(object).validate())()).rejects.toThrow(/replicas must be integer/);
    const chi = structuredClone(byKind('ClickHouseInstallation', 'ccotel'));
    const { file: _chiFile, ...chiObject } = chi;
    (chiObject.spec as { configuration: Record<string, unknown> }).configuration.cluster = [];
    const validate = ajv.compile(JSON.parse(readFileSync(join(KUBERNETES_DIR, 'schemas', 'clickhouseinstallation.schema.json'), 'utf8')));
    expect(validate(chiObject)).toBe(false);
  });

  it('the kustomization lists every central manifest and nothing that is missing', () => {
    const kustomization = manifests.find((m) => m.kind === 'Kustomization')!;
    const listed = (kustomization as unknown as { resources: string[] }).resources;
    const central = manifestFiles().filter((file) => !file.startsWith('agent/') && file !== 'kustomization.yaml');
    expect([...listed].sort()).toEqual(central.sort());
  });

  it('Services, HPAs, config maps, mounts and ports refer to things that exist', () => {
    const problems: string[] = [];
    for (const service of manifests.filter((m) => m.kind === 'Service')) {
      const spec = service.spec as { selector: Record<string, string>; ports: { targetPort?: string | number }[] };
      const selected = workloads.filter(
        (w) => w.metadata.namespace === service.metadata.namespace &&
          Object.entries(spec.selector).every(([k, v]) => (w.spec as { template: { metadata?: { labels?: Record<string, string> } } }).template.metadata?.labels?.[k] === v),
      );
      if (selected.length === 0) problems.push(`Service ${service.metadata.name} selects no workload`);
      for (const port of spec.ports) {
        if (typeof port.targetPort === 'string' && !selected.some((w) => podSpecOf(w)!.containers.some((c) => c.ports?.some((p) => p.name === port.targetPort)))) {
          problems.push(`Service ${service.metadata.name}: no container port named ${port.targetPort}`);
        }
      }
    }
    for (const hpa of manifests.filter((m) => m.kind === 'HorizontalPodAutoscaler')) {
      const target = (hpa.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef;
      if (!manifests.some((m) => m.kind === target.kind && m.metadata?.name === target.name)) problems.push(`HPA ${hpa.metadata.name}: no ${target.kind} ${target.name}`);
    }
    for (const workload of workloads) {
      const spec = podSpecOf(workload)!;
      const volumes = new Map((spec.volumes ?? []).map((v) => [v.name, v]));
      for (const container of allContainers(spec)) {
        for (const mount of container.volumeMounts ?? []) {
          const volume = volumes.get(mount.name);
          if (!volume) problems.push(`${workload.metadata.name}/${container.name}: mounts unknown volume ${mount.name}`);
          const configMapName = volume?.configMap?.name;
          if (!configMapName) continue;
          const configMap = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata?.name === configMapName && m.metadata.namespace === workload.metadata.namespace);
          if (!configMap) {
            problems.push(`${workload.metadata.name}: ConfigMap ${configMapName} is not defined`);
            continue;
          }
          if (mount.subPath && !(mount.subPath in (configMap.data as Record<string, string>))) problems.push(`${workload.metadata.name}: ${configMapName} has no key ${mount.subPath}`);
          // a collector's --config file must be a key of the ConfigMap mounted there
          for (const arg of container.args ?? []) {
            const path = /^(?:--config=)?(\/etc\/otelcol-ccotel\/.+)$/.exec(arg)?.[1];
            if (path && path.startsWith(mount.mountPath) && !(path.slice(mount.mountPath.length + 1) in (configMap.data as Record<string, string>))) {
              problems.push(`${workload.metadata.name}: --config ${path} is not in ConfigMap ${configMapName}`);
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('the generated parts are what deploy/kubernetes/generate.ts renders now', () => {
    for (const [name, text] of Object.entries(renderGenerated())) {
      expect(readFileSync(join(KUBERNETES_DIR, 'generated', name), 'utf8'), `generated/${name} is stale: run npx vite-node deploy/kubernetes/generate.ts`).toBe(text);
    }
  });
});

/** The collector environment a workload sets, with secrets replaced by placeholders. */
function collectorEnv(workload: string): Record<string, string> {
  const container = podSpecOf(byKind('Deployment', workload))!.containers[0]!;
  return Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? `placeholder-${e.name.toLowerCase()}`]));
}

/** The files of a ConfigMap written to a temporary directory. */
function configMapFiles(name: string, dir: string): Record<string, string> {
  const data = byKind('ConfigMap', name).data as Record<string, string>;
  return Object.fromEntries(Object.entries(data).map(([key, text]) => [key, (writeFileSync(join(dir, key), text), join(dir, key))]));
}

describe.skipIf(skipWithout(collectorBinary() === undefined ? 'the Collector binary is not built (npm run collector)' : undefined))('collector configs as the pods load them', () => {
  it('the gateway config validates with the gateway pod environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-k8s-'));
    try {
      const files = configMapFiles('ccotel-gateway-config', dir);
      const validate = spawnSync(collectorBinary()!, ['validate', '--config', files['gateway.yaml']!], { env: { ...collectorEnv('ccotel-gateway'), PATH: process.env.PATH }, encoding: 'utf8' });
      expect(validate.stderr).toBe('');
      expect(validate.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the scale-out tier starts with the DNS resolver overlay (one resolver per exporter)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-k8s-'));
    try {
      const files = configMapFiles('ccotel-scale-out-config', dir);
      const env = { ...collectorEnv('ccotel-scale-out'), CCOTEL_GATEWAYS_DNS: 'localhost', CCOTEL_STORAGE_DIR: join(dir, 'queue') };
      // startCollector puts every listener on a free loopback port
      for (const name of ['CCOTEL_GATEWAY_GRPC_ENDPOINT', 'CCOTEL_GATEWAY_HTTP_ENDPOINT', 'CCOTEL_HEALTH_ENDPOINT', 'CCOTEL_METRICS_HOST']) delete (env as Record<string, string>)[name];
      const collector = await startCollector({ configs: [files['scale-out.yaml']!, files['dns-resolver.yaml']!], env, readyTimeoutMs: 20_000 });
      await collector.stop();
      expect(collector.log()).not.toMatch(/only one resolver/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
