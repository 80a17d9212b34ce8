// Resource attributes of everything the sidecar emits: which host and user it describes. Honours the
// standard OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES variables.
import { readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import type { ContentLevel, Resource } from './model.js';

export const SIDECAR_VERSION = '0.1.0';

type Env = Record<string, string | undefined>;

function parseResourceAttributes(value: string | undefined): Resource {
  const attributes: Resource = {};
  for (const pair of (value ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      attributes[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // a malformed percent-encoding: the spec says to discard that pair
    }
  }
  return attributes;
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'unknown';
  }
}

/** Where Linux keeps the machine's id (systemd's, then D-Bus's): `host.id` as the OTel host detectors read it. */
export const MACHINE_ID_FILES = ['/etc/machine-id', '/var/lib/dbus/machine-id'];

/** The first of `files` that holds an id; undefined when none can be read (a container without one). */
export function machineId(files: readonly string[] = MACHINE_ID_FILES): string | undefined {
  for (const file of files) {
    try {
      const id = readFileSync(file, 'utf8').trim();
      if (/^[0-9a-f]{32}$/i.test(id)) return id.toLowerCase();
    } catch {
      // unreadable: the next, or no host.id
    }
  }
  return undefined;
}

/**
 * `ccotel.content.level` says how the content was treated before export (masked, none, raw): the gateway skips its
 * own labelled masking pass for data a sidecar masked already (collector-config/gateway.yaml).
 */
export function sidecarResource(contentLevel: ContentLevel, env: Env = process.env, machineIdFiles: readonly string[] = MACHINE_ID_FILES): Resource {
  const id = machineId(machineIdFiles);
  return {
    'service.name': 'ccotel',
    'service.version': SIDECAR_VERSION,
    'host.name': hostname(),
    ...(id === undefined ? {} : { 'host.id': id }),
    'user.name': currentUser(),
    ...parseResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES),
    ...(env.OTEL_SERVICE_NAME ? { 'service.name': env.OTEL_SERVICE_NAME } : {}),
    'ccotel.content.level': contentLevel,
  };
}
