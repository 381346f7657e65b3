import CMicroHTTPD
import Glibc

/// One HTTP request as libmicrohttpd parsed it. Header, query and cookie lookups go to
/// libmicrohttpd's own tables (no HTTP parsing here), so a request is only valid during the
/// handler call that received it.
public struct HTTPRequest {
    public let method: String
    /// The path without the query (libmicrohttpd splits it off and decodes both).
    public let path: String
    /// Empty when `bodyTooLarge`: what arrived past `HTTPServer.maximumBody` was dropped.
    public let body: [UInt8]
    /// The body was over `HTTPServer.maximumBody`; the handler answers 413 once it has
    /// checked the request like any other, so the refusal carries its usual headers.
    public let bodyTooLarge: Bool
    let connection: OpaquePointer

    /// A request header, case-insensitive name; nil when absent.
    public func header(_ name: String) -> String? { lookup(strapweb_header_kind, name) }
    /// A decoded query argument.
    public func query(_ name: String) -> String? { lookup(strapweb_query_kind, name) }
    public func cookie(_ name: String) -> String? { lookup(strapweb_cookie_kind, name) }

    private func lookup(_ kind: MHD_ValueKind, _ key: String) -> String? {
        MHD_lookup_connection_value(connection, kind, key).map { String(cString: $0) }
    }
}

/// What a streamed response's producer returns for each read.
public enum StreamChunk: Sendable {
    case data([UInt8])
    case end
    /// The producer broke off: libmicrohttpd closes the connection short of the body, so the
    /// client sees an error rather than a complete answer.
    case failed
}

/// The body of a response that is written while it is produced (Server-Sent Events). `next`
/// runs on the connection's own thread and may block until it has something; `finish` is
/// called once when libmicrohttpd lets go of the response (the client left or the stream
/// ended).
public protocol ResponseStream: AnyObject, Sendable {
    func next() -> StreamChunk
    func finish()
    /// The body's exact size when known beforehand (sent as Content-Length); nil streams it chunked.
    var size: UInt64? { get }
}

extension ResponseStream {
    public var size: UInt64? { nil }
}

public enum HTTPBody: Sendable {
    case bytes([UInt8])
    case stream(ResponseStream)
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: HTTPBody

    public init(status: Int, headers: [(String, String)] = [], body: HTTPBody = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func text(_ status: Int, _ text: String, type: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", type)], body: .bytes(Array(text.utf8)))
    }
}

public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    case startFailed(fd: Int32)

    public var description: String {
        switch self {
        case .startFailed(let fd): "libmicrohttpd refused to start on socket \(fd) (its error log says why)"
        }
    }
}

/// libmicrohttpd on a listening socket we own, one thread per connection. The handler runs
/// on the connection's thread and may block (it waits for strapd's answers through StrapKit).
public final class HTTPServer: @unchecked Sendable {
    /// Request bodies larger than this are refused (413): no endpoint takes more than a
    /// small JSON object.
    public static let maximumBody = 64 * 1024

    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse
    // Written once in start, before libmicrohttpd calls anything; read by its threads.
    private let handler: Handler
    private var daemon: OpaquePointer?

    public init(handler: @escaping Handler) { self.handler = handler }

    /// Starts serving `listener` (already bound and listening; ownership passes to the server).
    public func start(listener: Int32, connectionLimit: UInt32 = 256, idleTimeoutSeconds: UInt32 = 60) throws(HTTPServerError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let d = strapweb_start(listener, connectionLimit, idleTimeoutSeconds, accessHandler, me, requestCompleted, nil, nil, nil) else {
            throw .startFailed(fd: listener)
        }
        daemon = d
    }

    /// The same with TLS: every connection on `listener` is TLS, none plain HTTP.
    public func start(listener: Int32, tls: TLSMaterial, connectionLimit: UInt32 = 256, idleTimeoutSeconds: UInt32 = 60) throws(TLSError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let started = tls.certificate.withCString { certificate in
            tls.key.withCString { key in
                // libmicrohttpd reads both only while it starts (GnuTLS copies them), so they may go after.
                strapweb_start(listener, connectionLimit, idleTimeoutSeconds, accessHandler, me, requestCompleted, nil, certificate, key)
            }
        }
        guard let started else { throw .refused(certificate: tls.certificatePath, key: tls.keyPath) }
        daemon = started
    }

    /// Stops accepting and closes every connection; streamed responses get `finish`.
    public func stop() {
        if let d = daemon { MHD_stop_daemon(d) }
        daemon = nil
    }

    fileprivate func respond(_ request: HTTPRequest) -> HTTPResponse { handler(request) }
}

/// A request's body collected across libmicrohttpd's calls, in its per-request pointer.
private final class PendingRequest {
    var body: [UInt8] = []
    var tooLarge = false
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, requestState in
    guard let cls, let connection, let requestState, let uploadSize else { return strapweb_no }
    // The first call carries only the headers: keep state for the body and ask for it.
    guard let state = requestState.pointee else {
        requestState.pointee = Unmanaged.passRetained(PendingRequest()).toOpaque()
        return strapweb_yes
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(state).takeUnretainedValue()
    if uploadSize.pointee > 0 {
        if let uploadData, pending.body.count + uploadSize.pointee <= HTTPServer.maximumBody {
            pending.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: uploadSize.pointee))
        } else {
            pending.tooLarge = true
        }
        uploadSize.pointee = 0
        return strapweb_yes
    }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let request = HTTPRequest(method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "/",
                              body: pending.tooLarge ? [] : pending.body, bodyTooLarge: pending.tooLarge, connection: connection)
    return queue(server.respond(request), on: connection)
}

private let requestCompleted: MHD_RequestCompletedCallback = { _, _, requestState, _ in
    guard let requestState, let state = requestState.pointee else { return }
    Unmanaged<PendingRequest>.fromOpaque(state).release()
    requestState.pointee = nil
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let made: OpaquePointer?
    switch response.body {
    case .bytes(let bytes):
        made = bytes.withUnsafeBytes { buffer in
            // MUST_COPY: libmicrohttpd keeps its own copy, so the array may go.
            MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), strapweb_must_copy)
        }
    case .stream(let stream):
        let box = Unmanaged.passRetained(StreamBox(stream)).toOpaque()
        made = MHD_create_response_from_callback(stream.size ?? strapweb_size_unknown, 4096, streamReader, box, streamFinished)
        if made == nil { Unmanaged<StreamBox>.fromOpaque(box).release() }
    }
    guard let r = made else { return strapweb_no }
    defer { MHD_destroy_response(r) }
    for (name, value) in response.headers { _ = MHD_add_response_header(r, name, value) }
    return MHD_queue_response(connection, UInt32(response.status), r)
}

/// A stream and what of its last chunk did not fit libmicrohttpd's buffer yet.
private final class StreamBox {
    let stream: ResponseStream
    var pending: [UInt8] = []
    var offset = 0
    init(_ stream: ResponseStream) { self.stream = stream }
}

private let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return strapweb_reader_end_with_error }
    let box = Unmanaged<StreamBox>.fromOpaque(cls).takeUnretainedValue()
    while box.offset >= box.pending.count {
        switch box.stream.next() {
        case .end: return strapweb_reader_end_of_stream
        case .failed: return strapweb_reader_end_with_error
        case .data(let bytes):
            box.pending = bytes
            box.offset = 0
        }
    }
    let n = min(max, box.pending.count - box.offset)
    box.pending.withUnsafeBytes { src in
        UnsafeMutableRawPointer(buffer).copyMemory(from: src.baseAddress! + box.offset, byteCount: n)
    }
    box.offset += n
    return n
}

private let streamFinished: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let box = Unmanaged<StreamBox>.fromOpaque(cls).takeRetainedValue()
    box.stream.finish()
}
