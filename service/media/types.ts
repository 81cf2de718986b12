/**
 * What a probe of one media file tells the rest of the service. The media
 * module fills it from ffprobe's JSON; the timeline's plan compares it. The
 * shape is stored (as JSON, keyed by the file's sha256) in the probe cache, so
 * a change to it bumps PROBE_VERSION and old entries are probed again (2:
 * probes made before ffprobe was limited to self-contained demuxers).
 */

export const PROBE_VERSION = 2;

/** The first video stream that is not a cover picture. */
export interface VideoStreamInfo {
  index: number;
  /** codec_name: `h264`, `hevc`, `vp9`, `png` ... */
  codec: string;
  /** codec_tag_string: `avc1`, `avc3`, `hvc1`, `hev1`; null when ffprobe shows none (`[0][0][0][0]`). */
  codec_tag: string | null;
  /** `High`, `Main`, `High 4:4:4 Predictive` ...; null when unknown. */
  profile: string | null;
  /** codec level (H.264 40 = 4.0); null when unknown (ffprobe's -99). */
  level: number | null;
  width: number;
  height: number;
  /** sample_aspect_ratio `1:1`; null when unknown (`0:1` or absent). */
  sar: string | null;
  /** display_aspect_ratio `16:9`; null when unknown. */
  dar: string | null;
  /** `progressive`, `tt`, `bb`, `tb`, `bt`; null when unknown. */
  field_order: string | null;
  pix_fmt: string | null;
  /** stream time_base as `num/den`. */
  time_base: string;
  /** r_frame_rate as `num/den`, reduced (ffprobe gives `100/10` for a one-frame GIF; this is `10/1`). */
  frame_rate: string;
  avg_frame_rate: string;
  color_range: string | null;
  color_space: string | null;
  color_transfer: string | null;
  color_primaries: string | null;
  /** `SHA256:<hex>` of the codec extradata (SPS/PPS ...), null when there is none. */
  extradata_hash: string | null;
  /** Display rotation in degrees (display matrix or `rotate` tag), normalised to 0, 90, 180, 270; 0 when none. */
  rotation: number;
  /** Stream duration in seconds, or the container's when the stream has none; null when unknown. */
  duration_s: number | null;
  nb_frames: number | null;
  /** A still picture (png/mjpeg/webp... single frame, or an image2 demuxer input). */
  still: boolean;
}

/** The first audio stream. */
export interface AudioStreamInfo {
  index: number;
  codec: string;
  sample_rate: number;
  channels: number;
  channel_layout: string | null;
  duration_s: number | null;
}

export interface MediaProbe {
  version: number;
  /** format_name: `mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `png_pipe` ... */
  format: string;
  /** Container duration in seconds; null when unknown. */
  duration_s: number | null;
  video: VideoStreamInfo | null;
  audio: AudioStreamInfo | null;
}

export type MediaTool = 'ffmpeg' | 'ffprobe';
