// A one-line progress indicator on stderr for long runs.
//
// Why only on a terminal: CI logs and pipes must stay clean and diffable, so
// the indicator draws itself (with carriage returns) only when stderr is a
// TTY, and erases itself before anything else is printed.
//
// Usage:
//   Progress progress(models.size(), Progress::StderrIsTerminal());
//   progress.Started(i, path); ... progress.Finished(i);
//   progress.Stop();  // Erases the line; also done by the destructor.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_PROGRESS_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace footprint {

class Progress {
 public:
  // When `enabled`, redraws "[done/total] analyzing NAME (12s)" on `out` every
  // quarter second from a thread of its own. Disabled, it does nothing.
  Progress(size_t total, bool enabled, std::ostream* out = nullptr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Started(size_t index, const std::string& name);
  void Finished(size_t index);
  void Stop();  // Erases the line and joins the thread; idempotent.

  // The line as it would be drawn now (tests).
  std::string Line() const;

  static bool StderrIsTerminal();

 private:
  void Draw();

  const size_t total_;
  const bool enabled_;
  std::ostream* out_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  size_t done_ = 0;
  std::map<size_t, std::pair<std::string, std::chrono::steady_clock::time_point>> running_;
  bool stopping_ = false;
  size_t drawn_width_ = 0;
  std::thread ticker_;
};

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_PROGRESS_H_
