import MockBlueZSupport
import Testing

extension TestTools {
    static var skipReason: Comment { Comment(rawValue: skipText) }
}
