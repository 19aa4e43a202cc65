// What oneTBB guarantees, told to ThreadSanitizer.
//
// Debian's libtbb is not built with ThreadSanitizer, so TSan does not see the synchronisation that
// oneTBB performs inside it: that a serial pipeline stage runs one item at a time, that an item
// moves from stage to stage, that parallel_for's tasks finish before it returns. Without these
// annotations every pipeline and loader test reports hundreds of "races" that cannot happen; with
// them, a real race between our own tasks (two tasks writing one variable) is still reported. In
// other builds they compile to nothing.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define SHARDPACK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHARDPACK_TSAN 1
#endif
#endif

#ifdef SHARDPACK_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace shardpack {

// Everything this thread did so far happens before whatever a later HappensAfter(addr) follows.
inline void HappensBefore(const void* addr) {
#ifdef SHARDPACK_TSAN
  __tsan_release(const_cast<void*>(addr));
#else
  (void)addr;
#endif
}

inline void HappensAfter(const void* addr) {
#ifdef SHARDPACK_TSAN
  __tsan_acquire(const_cast<void*>(addr));
#else
  (void)addr;
#endif
}

}  // namespace shardpack
