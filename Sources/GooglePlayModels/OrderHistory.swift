/// `OrderHistory`: the events that changed an order after it was placed.
/// - Note: Immutable value; `Sendable`.
public struct OrderHistory: Sendable, Hashable, Codable {
    public var processedEvent: ProcessedEvent?
    public var cancellationEvent: CancellationEvent?
    public var refundEvent: RefundEvent?
    public var partialRefundEvents: [PartialRefundEvent]?

    public init(
        processedEvent: ProcessedEvent? = nil, cancellationEvent: CancellationEvent? = nil,
        refundEvent: RefundEvent? = nil, partialRefundEvents: [PartialRefundEvent]? = nil
    ) {
        self.processedEvent = processedEvent
        self.cancellationEvent = cancellationEvent
        self.refundEvent = refundEvent
        self.partialRefundEvents = partialRefundEvents
    }
}

/// `ProcessedEvent`.
public struct ProcessedEvent: Sendable, Hashable, Codable {
    public var eventTime: GoogleDateTime?
    public init(eventTime: GoogleDateTime? = nil) { self.eventTime = eventTime }
}

/// `CancellationEvent`.
public struct CancellationEvent: Sendable, Hashable, Codable {
    public var eventTime: GoogleDateTime?
    public init(eventTime: GoogleDateTime? = nil) { self.eventTime = eventTime }
}

/// `RefundEvent`: the order was refunded in full.
/// - Note: Immutable value; `Sendable`.
public struct RefundEvent: Sendable, Hashable, Codable {
    public var eventTime: GoogleDateTime?
    public var refundReason: PlayRawEnum<OrderRefundReason>?
    public var refundDetails: RefundDetails?

    public init(
        eventTime: GoogleDateTime? = nil, refundReason: PlayRawEnum<OrderRefundReason>? = nil,
        refundDetails: RefundDetails? = nil
    ) {
        self.eventTime = eventTime
        self.refundReason = refundReason
        self.refundDetails = refundDetails
    }
}

/// `RefundEvent.refundReason`.
public enum OrderRefundReason: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "REFUND_REASON_UNSPECIFIED"
    case other = "OTHER"
    case chargeback = "CHARGEBACK"
}

/// `PartialRefundEvent`.
/// - Note: Immutable value; `Sendable`.
public struct PartialRefundEvent: Sendable, Hashable, Codable {
    public var createTime: GoogleDateTime?
    public var processTime: GoogleDateTime?
    public var state: PlayRawEnum<PartialRefundEventState>?
    public var refundDetails: RefundDetails?

    public init(
        createTime: GoogleDateTime? = nil, processTime: GoogleDateTime? = nil,
        state: PlayRawEnum<PartialRefundEventState>? = nil, refundDetails: RefundDetails? = nil
    ) {
        self.createTime = createTime
        self.processTime = processTime
        self.state = state
        self.refundDetails = refundDetails
    }
}

/// `PartialRefundEvent.state`.
public enum PartialRefundEventState: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "STATE_UNSPECIFIED"
    case pending = "PENDING"
    case processedSuccessfully = "PROCESSED_SUCCESSFULLY"
}

/// `RefundDetails`: the amount refunded and its tax.
public struct RefundDetails: Sendable, Hashable, Codable {
    public var total: Money?
    public var tax: Money?
    public init(total: Money? = nil, tax: Money? = nil) {
        self.total = total
        self.tax = tax
    }
}
