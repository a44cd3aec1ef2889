import AppStoreModels

/// `orders.get`: one order of the Play Developer API's orders resource (a purchase, a renewal
/// charge, a paid app), with what the buyer paid (`total`, `tax`) and what the developer
/// receives (`developerRevenueInBuyerCurrency`, after Google's fee and tax).
///
/// Field names, types and enumerations are the discovery document's (`androidpublisher` v3,
/// schema `Order`). Unknown enumeration values are kept (`PlayRawEnum`), and so are members this
/// build does not know (`unknownFields`, re-encoded unchanged); callers also keep the answer's
/// body verbatim (`PlayAPIAnswer.body`).
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
    /// Members Google sent that this build does not know, by name.
    public var unknownFields: [String: JSONValue]

    public init(
        orderId: String? = nil, purchaseToken: String? = nil, state: PlayRawEnum<OrderState>? = nil,
        salesChannel: PlayRawEnum<OrderSalesChannel>? = nil, createTime: GoogleDateTime? = nil,
        lastEventTime: GoogleDateTime? = nil, buyerAddress: BuyerAddress? = nil, total: Money? = nil,
        tax: Money? = nil, developerRevenueInBuyerCurrency: Money? = nil, lineItems: [LineItem]? = nil,
        orderDetails: OrderDetails? = nil, orderHistory: OrderHistory? = nil, pointsDetails: PointsDetails? = nil,
        unknownFields: [String: JSONValue] = [:]
    ) {
        self.unknownFields = unknownFields
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

extension Order {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case orderId, purchaseToken, state, salesChannel, createTime, lastEventTime, buyerAddress, total, tax
        case developerRevenueInBuyerCurrency, lineItems, orderDetails, orderHistory, pointsDetails
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            orderId: try container.decodeIfPresent(String.self, forKey: .orderId),
            purchaseToken: try container.decodeIfPresent(String.self, forKey: .purchaseToken),
            state: try container.decodeIfPresent(PlayRawEnum<OrderState>.self, forKey: .state),
            salesChannel: try container.decodeIfPresent(PlayRawEnum<OrderSalesChannel>.self, forKey: .salesChannel),
            createTime: try container.decodeIfPresent(GoogleDateTime.self, forKey: .createTime),
            lastEventTime: try container.decodeIfPresent(GoogleDateTime.self, forKey: .lastEventTime),
            buyerAddress: try container.decodeIfPresent(BuyerAddress.self, forKey: .buyerAddress),
            total: try container.decodeIfPresent(Money.self, forKey: .total),
            tax: try container.decodeIfPresent(Money.self, forKey: .tax),
            developerRevenueInBuyerCurrency: try container.decodeIfPresent(
                Money.self, forKey: .developerRevenueInBuyerCurrency),
            lineItems: try container.decodeIfPresent([LineItem].self, forKey: .lineItems),
            orderDetails: try container.decodeIfPresent(OrderDetails.self, forKey: .orderDetails),
            orderHistory: try container.decodeIfPresent(OrderHistory.self, forKey: .orderHistory),
            pointsDetails: try container.decodeIfPresent(PointsDetails.self, forKey: .pointsDetails))
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        let members = try decoder.container(keyedBy: PlayMemberKey.self)
        for key in members.allKeys where !known.contains(key.stringValue) {
            unknownFields[key.stringValue] = try members.decode(JSONValue.self, forKey: key)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(orderId, forKey: .orderId)
        try container.encodeIfPresent(purchaseToken, forKey: .purchaseToken)
        try container.encodeIfPresent(state, forKey: .state)
        try container.encodeIfPresent(salesChannel, forKey: .salesChannel)
        try container.encodeIfPresent(createTime, forKey: .createTime)
        try container.encodeIfPresent(lastEventTime, forKey: .lastEventTime)
        try container.encodeIfPresent(buyerAddress, forKey: .buyerAddress)
        try container.encodeIfPresent(total, forKey: .total)
        try container.encodeIfPresent(tax, forKey: .tax)
        try container.encodeIfPresent(developerRevenueInBuyerCurrency, forKey: .developerRevenueInBuyerCurrency)
        try container.encodeIfPresent(lineItems, forKey: .lineItems)
        try container.encodeIfPresent(orderDetails, forKey: .orderDetails)
        try container.encodeIfPresent(orderHistory, forKey: .orderHistory)
        try container.encodeIfPresent(pointsDetails, forKey: .pointsDetails)
        // The same JSON object: the encoder hands back the object the known members went into.
        var members = encoder.container(keyedBy: PlayMemberKey.self)
        for (name, value) in unknownFields { try members.encode(value, forKey: PlayMemberKey(name)) }
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
