// A small stand-in for the few UIKit types the samples' view controllers use, so their files
// compile unchanged on Linux (`import UIKit` and all). Not UIKit: no views are drawn; what a
// screen would show is kept in plain properties a test can read. Shapes follow UIKit's
// (main-actor classes, UIAction-based controls); only what the samples use is here.
@_exported public import Foundation

/// UIKit `UIResponder`.
@MainActor open class UIResponder: NSObject {}

/// UIKit `UIView`: here only a container of subviews.
@MainActor open class UIView: UIResponder {
    public private(set) var subviews: [UIView] = []
    public var isHidden = false
    public func addSubview(_ view: UIView) { subviews.append(view) }
}

/// UIKit `UILabel`.
@MainActor open class UILabel: UIView {
    public var text: String?
    public var numberOfLines = 1
}

/// UIKit `UITextView` (its text only).
@MainActor open class UITextView: UIView {
    public var text: String! = ""
}

/// UIKit `UITextField` (its text only).
@MainActor open class UITextField: UIView {
    public var text: String?
    public var placeholder: String?
}

/// UIKit `UIAction`: a closure a control runs for an event.
@MainActor public final class UIAction: NSObject {
    public let title: String
    let handler: @MainActor (UIAction) -> Void
    public init(title: String = "", handler: @escaping @MainActor (UIAction) -> Void) {
        self.title = title
        self.handler = handler
    }
}

/// UIKit `UIControl`, with `UIControl.Event`.
@MainActor open class UIControl: UIView {
    public struct Event: OptionSet, Hashable, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let touchUpInside = Event(rawValue: 1 << 6)
        public static let valueChanged = Event(rawValue: 1 << 12)
    }
    public var isEnabled = true
    private var actions: [(UIAction, Event)] = []
    public func addAction(_ action: UIAction, for controlEvents: Event) { actions.append((action, controlEvents)) }
    /// UIKit `sendActions(for:)`: what a tap does (a test taps with it).
    public func sendActions(for controlEvents: Event) {
        guard isEnabled else { return }
        for (a, e) in actions where !e.intersection(controlEvents).isEmpty { a.handler(a) }
    }
}

/// UIKit `UIButton` (a title and actions).
@MainActor open class UIButton: UIControl {
    public private(set) var title: String?
    public enum State: Sendable { case normal }
    public func setTitle(_ title: String?, for state: State) { self.title = title }
}

/// UIKit `UIViewController`: a view, `viewDidLoad()` once, modal presentation recorded.
@MainActor open class UIViewController: UIResponder {
    public var title: String?
    private var loaded: UIView?
    public private(set) var presentedViewController: UIViewController?

    public override init() { super.init() }

    open var view: UIView! {
        if let loaded { return loaded }
        let v = UIView()
        loaded = v
        viewDidLoad()
        return v
    }

    open func viewDidLoad() {}
    public func loadViewIfNeeded() { _ = view }

    open func present(_ viewController: UIViewController, animated flag: Bool, completion: (() -> Void)? = nil) {
        presentedViewController = viewController
        completion?()
    }

    open func dismiss(animated flag: Bool, completion: (() -> Void)? = nil) {
        presentedViewController = nil
        completion?()
    }
}

/// UIKit `UIAlertAction`.
@MainActor public final class UIAlertAction: NSObject {
    public enum Style: Sendable { case `default`, cancel, destructive }
    public let title: String?
    public let style: Style
    public init(title: String?, style: Style, handler: ((UIAlertAction) -> Void)? = nil) {
        self.title = title
        self.style = style
    }
}

/// UIKit `UIAlertController` (what it says is kept; nothing is shown).
@MainActor open class UIAlertController: UIViewController {
    public enum Style: Sendable { case alert, actionSheet }
    public let message: String?
    public let preferredStyle: Style
    public private(set) var actions: [UIAlertAction] = []
    public init(title: String?, message: String?, preferredStyle: Style) {
        self.message = message
        self.preferredStyle = preferredStyle
        super.init()
        self.title = title
    }
    public func addAction(_ action: UIAlertAction) { actions.append(action) }
}
