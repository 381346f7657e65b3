/// Path arithmetic the daemon needs, without Foundation's NSString (strapd links only
/// FoundationEssentials: the classic Foundation library alone cost 4 MB of resident memory).
enum Path {
    /// "/a/b/c" → "/a/b", "c" → "", "/c" → "/" (NSString.deletingLastPathComponent's answers).
    static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        var parent = trimmed[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent = parent.dropLast() }
        return String(parent)
    }
}
