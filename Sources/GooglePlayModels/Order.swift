/// `orders.get`: one order of the Play Developer API's orders resource (a purchase, a renewal
/// charge, a paid app), with what the buyer paid (`total`, `tax`) and what the developer
/// receives (`developerRevenueInBuyerCurrency`, after Google's fee and tax).
///
/// Field names, types and enumerations are the discovery document's (`androidpublisher` v3,
/// schema `Order`). Unknown enumeration values are kept (`PlayRawEnum`); members this build does
/// not know are not decoded, but callers keep the answer's body verbatim (`PlayAPIAnswer.body`).
/// - Note: Immutable value; `Sendable`.
public struct Order: Sendable, Hashable, Codable {
    public var orderId: String?
    public var purchaseToken: String?
    public var state: PlayRawEnum<OrderState>?
    public var salesChannel: PlayRawEnum<OrderSalesChannel>?
    public var createTime: GoogleDateTime?
    public var lastEventTime: GoogleDateTime?
    public var buyerAddress: BuyerAddress?
    /// The amount paid, tax included.
    public var total: Money?
    public var tax: Money?
    /// What the developer receives, in the buyer's currency: the price less tax and Google's fee.
    public var developerRevenueInBuyerCurrency: Money?
    public var lineItems: [LineItem]?
    public var orderDetails: OrderDetails?
    public var orderHistory: OrderHistory?
    public var pointsDetails: PointsDetails?

    public init(
        orderId: String? = nil, purchaseToken: String? = nil, state: PlayRawEnum<OrderState>? = nil,
        salesChannel: PlayRawEnum<OrderSalesChannel>? = nil, createTime: GoogleDateTime? = nil,
        lastEventTime: GoogleDateTime? = nil, buyerAddress: BuyerAddress? = nil, total: Money? = nil,
        tax: Money? = nil, developerRevenueInBuyerCurrency: Money? = nil, lineItems: [LineItem]? = nil,
        orderDetails: OrderDetails? = nil, orderHistory: OrderHistory? = nil, pointsDetails: PointsDetails? = nil
    ) {
        self.orderId = orderId
        self.purchaseToken = purchaseToken
        self.state = state
        self.salesChannel = salesChannel
        self.createTime = createTime
        self.lastEventTime = lastEventTime
        self.buyerAddress = buyerAddress
        self.total = total
        self.tax = tax
        self.developerRevenueInBuyerCurrency = developerRevenueInBuyerCurrency
        self.lineItems = lineItems
        self.orderDetails = orderDetails
        self.orderHistory = orderHistory
        self.pointsDetails = pointsDetails
    }
}

/// `Order.state`.
public enum OrderState: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "STATE_UNSPECIFIED"
    case pending = "PENDING"
    case processed = "PROCESSED"
    case canceled = "CANCELED"
    case pendingRefund = "PENDING_REFUND"
    case partiallyRefunded = "PARTIALLY_REFUNDED"
    case refunded = "REFUNDED"
}

/// `Order.salesChannel`.
public enum OrderSalesChannel: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "SALES_CHANNEL_UNSPECIFIED"
    case inApp = "IN_APP"
    case pcEmulator = "PC_EMULATOR"
    case nativePC = "NATIVE_PC"
    case playStore = "PLAY_STORE"
    case outsidePlayStore = "OUTSIDE_PLAY_STORE"
}

/// `BuyerAddress`: where the buyer is, for tax.
/// - Note: Immutable value; `Sendable`.
public struct BuyerAddress: Sendable, Hashable, Codable {
    public var buyerCountry: String?
    public var buyerState: String?
    public var buyerPostcode: String?

    public init(buyerCountry: String? = nil, buyerState: String? = nil, buyerPostcode: String? = nil) {
        self.buyerCountry = buyerCountry
        self.buyerState = buyerState
        self.buyerPostcode = buyerPostcode
    }
}

/// `OrderDetails`: the order at creation time.
/// - Note: Immutable value; `Sendable`.
public struct OrderDetails: Sendable, Hashable, Codable {
    public var taxInclusive: Bool?

    public init(taxInclusive: Bool? = nil) { self.taxInclusive = taxInclusive }
}

/// `PointsDetails`: Play Points applied to the order. `pointsSpent` and
/// `pointsDiscountRateMicros` are int64 as decimal strings, as Google sends them.
/// - Note: Immutable value; `Sendable`.
public struct PointsDetails: Sendable, Hashable, Codable {
    public var pointsOfferId: String?
    public var pointsSpent: String?
    public var pointsDiscountRateMicros: String?
    public var pointsCouponValue: Money?

    public init(
        pointsOfferId: String? = nil, pointsSpent: String? = nil, pointsDiscountRateMicros: String? = nil,
        pointsCouponValue: Money? = nil
    ) {
        self.pointsOfferId = pointsOfferId
        self.pointsSpent = pointsSpent
        self.pointsDiscountRateMicros = pointsDiscountRateMicros
        self.pointsCouponValue = pointsCouponValue
    }
}

/// `orders.batchget`'s answer.
/// - Note: Immutable value; `Sendable`.
public struct BatchGetOrdersResponse: Sendable, Hashable, Codable {
    public var orders: [Order]?

    public init(orders: [Order]? = nil) { self.orders = orders }
}
