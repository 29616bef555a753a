// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with the lock
// annotations of thread_annotations.h, so clang's -Wthread-safety can check every field marked
// GUARDED_BY. libstdc++'s own mutex types carry no annotations, which is why berth code uses
// these instead of std::mutex / std::lock_guard / std::unique_lock.
//
// All three are thread-safe by nature; none is copyable or movable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/thread_annotations.h"

namespace berth {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mutex_.lock(); }
  void Unlock() RELEASE() { mutex_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mutex_;
};

// Holds `mutex` from construction to destruction. Unlock() and Lock() in between let a scope
// drop the mutex around slow work (a store write, a disk walk) and take it back.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mutex_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    held_ = false;
    mutex_.Unlock();
  }
  void Lock() ACQUIRE() {
    mutex_.Lock();
    held_ = true;
  }

 private:
  Mutex& mutex_;
  bool held_ = true;
};

// A condition variable waited on with a berth::Mutex held. A predicate that reads guarded
// fields is a lambda annotated with the same requirement: `[this]() REQUIRES(mutex_) {...}`.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

  // Waits until `done()` holds.
  template <typename Predicate>
  void Wait(Mutex& mutex, Predicate done) REQUIRES(mutex) {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    cv_.wait(lock, done);
    lock.release();  // the caller still holds it
  }

  // Waits until `done()` holds or `timeout` passes; returns done().
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(Mutex& mutex, std::chrono::duration<Rep, Period> timeout, Predicate done)
      REQUIRES(mutex) {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    const bool result = cv_.wait_for(lock, timeout, done);
    lock.release();  // the caller still holds it
    return result;
  }

 private:
  std::condition_variable cv_;
};

}  // namespace berth
