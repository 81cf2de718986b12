// Reports a task job's progress and log lines to Backlot.
//
// Every write goes through one queue, in order, so a late progress update can
// never land after the job has ended (Backlot answers 409 job_finished to any
// change of a finished job). Progress updates and log lines that pile up while
// a request is in flight are merged into the next one.
'use strict';

class JobReporter {
  constructor(api, jobId) {
    this.api = api;
    this.jobId = jobId;
    this.queue = Promise.resolve();
    this.progressDue = null; // latest progress not yet sent
    this.linesDue = []; // log lines not yet sent
    this.finished = false; // true once the final state was sent
  }

  progress(num, den) {
    const scheduled = this.progressDue !== null;
    this.progressDue = { progress_num: Math.min(num, den), progress_den: den };
    if (!scheduled) {
      this.enqueue(() => {
        const body = this.progressDue;
        this.progressDue = null;
        return this.api.patch(`/jobs/${this.jobId}`, body);
      });
    }
  }

  log(...lines) {
    const scheduled = this.linesDue.length > 0;
    // Backlot caps a log line at 16 KiB; ffmpeg lines are far shorter.
    this.linesDue.push(...lines.map((l) => String(l).slice(0, 4000)));
    if (!scheduled) this.enqueue(() => this.sendLines());
  }

  sendLines() {
    const lines = this.linesDue.splice(0, 1000); // at most 1000 lines per append
    if (this.linesDue.length > 0) this.enqueue(() => this.sendLines());
    return this.api.post(`/jobs/${this.jobId}/logs`, { lines });
  }

  /** Sends whatever is queued, then the final PATCH (state and anything else). */
  async finish(patch) {
    this.finished = true;
    await this.enqueue(() => this.api.patch(`/jobs/${this.jobId}`, patch));
  }

  enqueue(fn) {
    this.queue = this.queue.then(fn).catch((err) => {
      // Reporting is best effort: a lost progress update must not fail a render.
      console.error(`job ${this.jobId}: ${err.message}`);
    });
    return this.queue;
  }
}

module.exports = { JobReporter };
