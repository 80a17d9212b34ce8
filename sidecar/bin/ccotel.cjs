#!/usr/bin/env node
// The `ccotel` command. libuv sizes its thread pool once, when it is first used, and under Node 20 the ES module
// loader uses it before an ES module's first line runs; CommonJS runs first. chdb runs every query on that pool,
// beside the insert lanes and Node's file reads: 8 threads let the store endpoint answer 4 queries at once
// (sidecar/src/store/threadpool.ts). A size the environment sets is kept.
/* global process */
'use strict';
process.env.UV_THREADPOOL_SIZE ??= '8';
import('../../dist/sidecar/src/cli.js');
