public import ReaderSession

/// The harness's virtual clock: ReaderSession's ``/NFCBase/ManualClock``, which the harness steps one
/// timer at a time (`nextDeadline`, `fireNext(upTo:)`) so that what a timer sets off (a
/// delegate call, an app's own timer) settles before the next one fires. Time starts at zero.
public typealias ConformanceClock = ManualClock
