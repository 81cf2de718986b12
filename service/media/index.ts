/** The media module's public face: the one place ffmpeg and ffprobe run (README.md). */
export { PROBE_VERSION } from './types';
export type { AudioStreamInfo, MediaProbe, MediaTool, VideoStreamInfo } from './types';
export { TOOL_ENV, bundledPackage, findOnPath, requireTool, resolveMediaTools, resolveTool, toolPath, unpackedPath } from './tools';
export type { ResolvedTool, ToolSource } from './tools';
export { createMediaScope, killAllChildren, liveChildren, runTool } from './run';
export type { LiveChild, MediaScope, RunOptions, RunResult } from './run';
export {
  MAX_CONCURRENT_PROBES,
  MAX_PROBE_OUTPUT_BYTES,
  PROBE_FORMATS,
  PROBE_TIMEOUT_MS,
  ProbeError,
  normalizeProbe,
  parseProbeOutput,
  probeArgs,
  probeMedia,
} from './probe';
export type { ProbeOptions } from './probe';
