// Lock annotations for clang's -Wthread-safety analysis: they state which mutex guards which
// field and which functions must (or must not) be called with it held, and clang proves it at
// compile time. gcc has no such analysis, so under gcc every macro is empty.
//
// The names follow clang's documentation ("Thread Safety Analysis") and Abseil's
// thread_annotations.h, so they read the same as in other codebases.
#pragma once

#if defined(__clang__)
#define BERTH_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define BERTH_THREAD_ANNOTATION(x)
#endif

// A class that is a lock (berth::Mutex).
#define CAPABILITY(x) BERTH_THREAD_ANNOTATION(capability(x))
// An RAII class that holds a lock for its lifetime (berth::MutexLock).
#define SCOPED_CAPABILITY BERTH_THREAD_ANNOTATION(scoped_lockable)

// The field may be read or written only with the given mutex held.
#define GUARDED_BY(x) BERTH_THREAD_ANNOTATION(guarded_by(x))
// The data the pointer field points to may be touched only with the given mutex held.
#define PT_GUARDED_BY(x) BERTH_THREAD_ANNOTATION(pt_guarded_by(x))

// Lock ordering: this mutex is taken after (before) the listed ones.
#define ACQUIRED_AFTER(...) BERTH_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) BERTH_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))

// The caller must hold the mutexes (exclusively / shared) when calling.
#define REQUIRES(...) BERTH_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) BERTH_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))

// The function takes (gives back) the mutexes; with no argument, `this`.
#define ACQUIRE(...) BERTH_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) BERTH_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) BERTH_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) BERTH_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) BERTH_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))

// The caller must NOT hold the mutexes (the function takes them itself).
#define EXCLUDES(...) BERTH_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// Tells the analysis the mutex is held here (checked at run time by the callee).
#define ASSERT_CAPABILITY(x) BERTH_THREAD_ANNOTATION(assert_capability(x))
// The function returns a reference to the given mutex.
#define RETURN_CAPABILITY(x) BERTH_THREAD_ANNOTATION(lock_returned(x))

// Turns the analysis off for one function; say in a comment why it cannot follow the locking.
#define NO_THREAD_SAFETY_ANALYSIS BERTH_THREAD_ANNOTATION(no_thread_safety_analysis)
