#include "analyzer/cli/progress.h"

#include <unistd.h>

#include <iostream>

#include "absl/strings/str_cat.h"

namespace footprint {

Progress::Progress(size_t total, bool enabled, std::ostream* out)
    : total_(total), enabled_(enabled), out_(out != nullptr ? out : &std::cerr) {
  if (!enabled_) return;
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::milliseconds(250));
      if (stopping_) break;
      lock.unlock();
      Draw();
      lock.lock();
    }
  });
}

Progress::~Progress() { Stop(); }

bool Progress::StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

void Progress::Started(size_t index, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_[index] = {name, std::chrono::steady_clock::now()};
}

void Progress::Finished(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_.erase(index);
  ++done_;
}

std::string Progress::Line() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string line = absl::StrCat("[", done_, "/", total_, "]");
  if (running_.empty()) return line;
  // The earliest model still running: the one the output waits for.
  const auto& [index, entry] = *running_.begin();
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - entry.second).count();
  std::string name = entry.first;
  if (name.size() > 60) name = "..." + name.substr(name.size() - 57);
  absl::StrAppend(&line, " analyzing ", name, " (", seconds, "s)");
  if (running_.size() > 1) absl::StrAppend(&line, " +", running_.size() - 1, " more");
  return line;
}

void Progress::Draw() {
  const std::string line = Line();
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_) return;
  *out_ << "\r" << line << "\033[K" << std::flush;
  drawn_width_ = line.size();
}

void Progress::Stop() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (drawn_width_ > 0) *out_ << "\r\033[K" << std::flush;
}

}  // namespace footprint
