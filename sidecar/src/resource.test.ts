import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sidecarResource } from './resource.js';

describe('sidecarResource', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ccotel-resource-'));

  it('names the host by its machine id (host.id), from the first file that holds one', () => {
    const id = 'aa'.repeat(16);
    writeFileSync(join(dir, 'empty'), '\n');
    writeFileSync(join(dir, 'machine-id'), `${id.toUpperCase()}\n`);
    const resource = sidecarResource('masked', {}, [join(dir, 'missing'), join(dir, 'empty'), join(dir, 'machine-id')]);
    expect(resource['host.id']).toBe(id);
    expect(resource['host.name']).toBeTruthy();
    expect(resource['user.name']).toBeTruthy();
  });

  it('has no host.id when no file can be read, and keeps OTEL_RESOURCE_ATTRIBUTES as given', () => {
    const resource = sidecarResource('masked', { OTEL_RESOURCE_ATTRIBUTES: 'team=payments,cost_center=cc%2042' }, [join(dir, 'missing')]);
    expect('host.id' in resource).toBe(false);
    expect(resource).toMatchObject({ team: 'payments', cost_center: 'cc 42' });
  });
});
