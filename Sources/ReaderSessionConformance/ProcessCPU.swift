#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's CPU time (user + system, every thread): `getrusage(RUSAGE_SELF)` (POSIX).
enum ProcessCPU {
    static func now() -> Duration {
        var u = rusage()
        #if canImport(Glibc)
            let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
            let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &u) == 0 else { return .zero }
        func d(_ t: timeval) -> Duration { .seconds(Int64(t.tv_sec)) + .microseconds(Int64(t.tv_usec)) }
        return d(u.ru_utime) + d(u.ru_stime)
    }
}
