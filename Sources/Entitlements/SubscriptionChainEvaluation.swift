import AppStoreModels

/// What one subscription chain says at the evaluation instant: the state of each of its
/// products, and its events.
extension SubscriptionChain {
    var group: String { Self.group(startingWith: transactions[0], catalog: catalog) }

    func evaluate(now: Timestamp, builder: LifecycleEventBuilder, versions: [String: [TransactionFact]])
        -> (
            subscriptions: [(info: SubscriptionInfo, accessEnd: Timestamp)], events: [LifecycleEvent],
            reasonUpdates: [LifecycleEvent]
        )
    {
        var lastIndexByProduct: [String: Int] = [:]
        for index in transactions.indices { lastIndexByProduct[transactions[index].productId] = index }
        let subscriptions = lastIndexByProduct.values.sorted().map { subscriptionInfo(index: $0, now: now) }
        var (events, reasonUpdates) = periodEvents(now: now, builder: builder)
        events += renewalEvents(builder: builder)
        for transaction in transactions {
            events += builder.versionEvents(versions[transaction.transactionId] ?? [transaction])
        }
        return (subscriptions, events, reasonUpdates)
    }

    // MARK: - State

    /// The product's state, and when its access ends or ended (revocation, product change,
    /// grace period or expiry) for choosing and explaining entitlement grantors.
    private func subscriptionInfo(index: Int, now: Timestamp) -> (info: SubscriptionInfo, accessEnd: Timestamp) {
        let transaction = transactions[index]
        let expiry = expires(index)
        let isLast = index == transactions.count - 1
        let revocation = transaction.revocation
        var status: SubscriptionStatus
        var isActive: Bool
        var reason: String
        var grace: Timestamp?
        var billingIssueAt: Timestamp?
        var expirationReason: ExpirationReason?

        if let revocation {
            status = revocation.kind == .refund ? .refunded : .revoked
            isActive = now < min(revocation.revokedAt, expiry)
            reason = revocation.text
        } else if isSuperseded(index) || !isLast && starts[index + 1].continuesService {
            let successor = isLast ? nil : transactions[index + 1]
            status = .productChanged
            isActive = now < effectiveEnds[index]
            if let successor, case .productChange(let change) = starts[index + 1] {
                reason =
                    "\(change.kind.rawValue.lowercased()) to \(successor.productId) on \(successor.purchaseDate.humanReadable)"
            } else if let successor {
                reason = "changed to \(successor.productId) at the renewal of \(successor.purchaseDate.humanReadable)"
            } else {
                reason =
                    "upgraded on \(effectiveEnds[index].humanReadable); the new product's transaction has not arrived"
            }
        } else if now < expiry && (isLast || now < transactions[index + 1].purchaseDate) {
            status = .active
            isActive = true
            reason = "active until \(expiry.humanReadable)"
        } else if billingIssue[index] && now < retryEnds[index] && isLast {
            billingIssueAt = expiry
            grace = graceEnds[index].flatMap { $0 > now ? $0 : nil }
            if let grace {
                status = .inGracePeriod
                isActive = true
                reason =
                    "in billing grace period until \(grace.humanReadable): renewal failed \(expiry.humanReadable), Apple is retrying"
            } else {
                status = .inBillingRetry
                isActive = false
                reason =
                    "billing retry since \(expiry.humanReadable): no access until the payment recovers (not churned)"
            }
        } else {
            status = .expired
            isActive = false
            expirationReason = self.expirationReason(index)
            reason = "expired \(lapseTime(index).humanReadable), \(expirationReason!.text)"
        }

        let renewal = autoRenew(through: index)
        let alive = status == .active || status == .inGracePeriod || status == .inBillingRetry
        let latest = runSnapshots(through: index).last
        var pending: ProductChange?
        if alive, renewal.enabled, let target = latest?.autoRenewProductId, target != transaction.productId {
            pending = ProductChange(
                fromProductId: transaction.productId, toProductId: target,
                kind: ProductChange.classify(
                    from: catalog[transaction.productId], to: catalog[target], timing: .atNextRenewal),
                timing: .atNextRenewal, effectiveAt: expiry)
            reason += "; changes to \(target) at the next renewal"
        }
        let willRenew = alive && renewal.enabled
        if alive {
            if renewal.enabled {
                reason += status == .active ? "; renews" : ""
            } else {
                reason +=
                    "; will not renew: auto-renew off by customer since \(renewal.offSince?.humanReadable ?? "an unknown date")"
            }
        }
        if transaction.periodType != .normal { reason += " (\(transaction.periodType.rawValue.lowercased()) period)" }
        let consent: PriceIncreaseConsent? =
            switch runSnapshots(through: index).last(where: { $0.priceIncreaseStatus != nil })?.priceIncreaseStatus {
            case 0?: .pending
            case 1?: .accepted
            default: nil
            }
        var accessEnd = grace ?? expiry
        if let revocation { accessEnd = min(accessEnd, revocation.revokedAt) }
        if status == .productChanged { accessEnd = min(accessEnd, effectiveEnds[index]) }
        let info = SubscriptionInfo(
            productId: transaction.productId, subscriptionGroup: group, status: status, isActive: isActive,
            transactionId: transaction.transactionId, originalTransactionId: transaction.originalTransactionId,
            purchaseDate: transaction.purchaseDate, originalPurchaseDate: transaction.originalPurchaseDate,
            expiresDate: transaction.expiresDate, periodType: transaction.periodType,
            offerIdentifier: transaction.offerIdentifier, willRenew: willRenew,
            autoRenewProductId: alive ? latest?.autoRenewProductId : nil, pendingProductChange: pending,
            unsubscribeDetectedAt: alive && !renewal.enabled ? renewal.offSince : nil,
            billingIssueDetectedAt: billingIssueAt, gracePeriodExpiresDate: grace, expirationReason: expirationReason,
            priceIncreaseConsent: alive ? consent : nil, revocation: revocation, ownership: transaction.ownership,
            environment: transaction.environment, price: nil, reason: reason)
        return (info, accessEnd)
    }

    // MARK: - Events

    /// Events of period starts and ends: purchases, renewals, conversions, recoveries, product
    /// changes, offers, billing issues and expirations.
    /// `reasonUpdates` holds, per expiration, the event that reports its current reason should it
    /// differ from the one already reported (the engine decides from the previous state).
    private func periodEvents(now: Timestamp, builder: LifecycleEventBuilder)
        -> (events: [LifecycleEvent], reasonUpdates: [LifecycleEvent])
    {
        var events: [LifecycleEvent] = []
        var reasonUpdates: [LifecycleEvent] = []
        for index in transactions.indices {
            let transaction = transactions[index]
            let id = transaction.transactionId
            let at = transaction.purchaseDate
            let previous = index > 0 ? transactions[index - 1] : nil
            switch starts[index] {
            case .initial, .resubscribe:
                let resubscribed = starts[index] == .resubscribe
                if transaction.periodType == .trial {
                    events.append(
                        builder.event(
                            .trialStarted, key: id, at: at, transaction: transaction, money: .charged,
                            summary: "free trial of \(transaction.productId) until \(expires(index).humanReadable)"))
                } else if resubscribed {
                    var event = builder.event(
                        .renewal, key: id, at: at, transaction: transaction, money: .charged,
                        summary: "resubscribed to \(transaction.productId) after the subscription lapsed")
                    event.isResubscription = true
                    if factGapStarts.contains(index) {
                        event.afterFactGap = true
                        event.summary =
                            "renewed \(transaction.productId) after a gap: the period before it is missing from the facts"
                    }
                    events.append(event)
                } else {
                    events.append(
                        builder.event(
                            .initialPurchase, key: id, at: at, transaction: transaction, money: .charged,
                            summary: "subscribed to \(transaction.productId)"))
                }
            case .renewal:
                var event = builder.event(
                    .renewal, key: id, at: at, transaction: transaction, money: .charged,
                    summary: "renewed \(transaction.productId) until \(expires(index).humanReadable)")
                if let previous, previous.productId != transaction.productId {
                    event.productChange = scheduledChange(from: previous.productId, to: transaction, effectiveAt: at)
                    event.summary = "renewed into \(transaction.productId) (changed from \(previous.productId))"
                }
                events.append(event)
            case .trialConversion:
                events.append(
                    builder.event(
                        .trialConverted, key: id, at: at, transaction: transaction, money: .charged,
                        summary: "trial converted to a paid period of \(transaction.productId)"))
            case .billingRecovery:
                events.append(
                    builder.event(
                        .billingRecovered, key: id, at: at, transaction: transaction,
                        summary: "payment recovered after a billing issue"))
                let converted = previous?.periodType == .trial && transaction.periodType != .trial
                var event = builder.event(
                    converted ? .trialConverted : .renewal, key: id, at: at, transaction: transaction, money: .charged,
                    summary: converted
                        ? "trial converted after a billing issue"
                        : "renewed \(transaction.productId) after a billing issue")
                if let previous, previous.productId != transaction.productId {
                    event.productChange = scheduledChange(from: previous.productId, to: transaction, effectiveAt: at)
                }
                events.append(event)
            case .productChange(let change):
                var event = builder.event(
                    .productChange, key: id, at: at, transaction: transaction, money: .charged,
                    summary:
                        "\(change.kind.rawValue.lowercased()) from \(change.fromProductId) to \(change.toProductId), effective at once"
                )
                event.productChange = change
                events.append(event)
            }

            if transaction.periodType.isRedeemedOffer {
                let continuing =
                    previous.map {
                        !starts[index].beginsRun && $0.periodType == transaction.periodType
                            && $0.offerIdentifier == transaction.offerIdentifier
                    } ?? false
                if !continuing {
                    var event = builder.event(
                        .offerRedeemed, key: id, at: at, transaction: transaction,
                        summary:
                            "\(transaction.periodType.rawValue.lowercased()) offer \(transaction.offerIdentifier ?? "") redeemed"
                    )
                    event.offerIdentifier = transaction.offerIdentifier
                    events.append(event)
                }
            }

            guard !isSuperseded(index), !transaction.isRevokedOtherThanByUpgrade else { continue }
            let expiry = expires(index)
            if billingIssue[index] && now >= expiry {
                events.append(
                    builder.event(
                        .billingIssue, key: id, at: expiry, transaction: transaction,
                        summary: "renewal of \(transaction.productId) failed; Apple is retrying"))
                if let grace = graceEnds[index] {
                    var event = builder.event(
                        .gracePeriodStarted, key: id, at: expiry, transaction: transaction,
                        summary: "billing grace period until \(grace.humanReadable)")
                    event.gracePeriodExpiresDate = grace
                    events.append(event)
                }
            }
            // EXPIRATION is the end of access, dated when it happens: the expiry, or the end of
            // the billing grace period. Billing retry goes on without access, so a recovery
            // after that instant is a new start of access and the retry's end is no event.
            let accessEnd = accessEnd(index)
            let lapsed: Bool
            if index + 1 < transactions.count {
                switch starts[index + 1] {
                case .resubscribe: lapsed = true
                case .billingRecovery: lapsed = transactions[index + 1].purchaseDate > accessEnd
                default: lapsed = false
                }
            } else {
                lapsed = now >= accessEnd
            }
            if lapsed {
                let reason = expirationReason(index)
                var event = builder.event(
                    .expiration, key: id, at: accessEnd, transaction: transaction,
                    summary: billingIssue[index]
                        ? "access ended: the renewal payment failed and Apple keeps retrying it (\(reason.rawValue))"
                        : "expired: \(reason.text)")
                event.expirationReason = reason
                event.expiresDate = expiry
                events.append(event)
                var update = builder.event(
                    .expirationReasonUpdated, key: "\(id)/\(reason.rawValue)",
                    at: max(accessEnd, expirationReasonKnownAt(index) ?? accessEnd), transaction: transaction,
                    summary: "expiration reason now known: \(reason.text)")
                update.expirationReason = reason
                update.expiresDate = expiry
                reasonUpdates.append(update)
            }
        }
        return (events, reasonUpdates)
    }

    private func scheduledChange(from: String, to transaction: TransactionFact, effectiveAt: Timestamp) -> ProductChange
    {
        ProductChange(
            fromProductId: from, toProductId: transaction.productId,
            kind: ProductChange.classify(
                from: catalog[from], to: catalog[transaction.productId], timing: .atNextRenewal),
            timing: .atNextRenewal, effectiveAt: effectiveAt)
    }

    /// Events read from the sequence of renewal snapshots: auto-renew turned off and on,
    /// a product change scheduled for the renewal, a price increase pending or accepted.
    /// A transition's id names its period and the instant of the snapshot that shows it
    /// (`CANCELLATION/<transaction>/<signed ms>`), never a count: an older snapshot arriving
    /// late cannot give a change already reported a second id (issue 17, item 6).
    private func renewalEvents(builder: LifecycleEventBuilder) -> [LifecycleEvent] {
        var events: [LifecycleEvent] = []
        var autoRenew = true
        var pending: String?
        var priceStatus: Int32?
        var period = -1
        for snapshot in snapshots {
            let instant = snapshot.signedDate.millisecondsSince1970
            let index = periodIndex(at: snapshot.signedDate)
            if index != period {
                if period < 0 || (period + 1...index).contains(where: { starts[$0].beginsRun }) {
                    autoRenew = true
                    pending = nil
                }
                period = index
            }
            let transaction = transactions[index]
            let alive =
                snapshot.signedDate < (billingIssue[index] ? retryEnds[index] : effectiveEnds[index])
                && !transaction.isRevokedOtherThanByUpgrade
            if let enabled = snapshot.autoRenewEnabled, enabled != autoRenew {
                autoRenew = enabled
                if alive {
                    let type: LifecycleEventType =
                        enabled ? .uncancellation : (transaction.periodType == .trial ? .trialCancelled : .cancellation)
                    events.append(
                        builder.event(
                            type, key: "\(transaction.transactionId)/\(instant)",
                            at: snapshot.signedDate, transaction: transaction,
                            summary: enabled
                                ? "auto-renew turned back on"
                                : "auto-renew turned off; access lasts until \(expires(index).humanReadable)"))
                }
            }
            guard alive else { continue }
            let target = snapshot.autoRenewProductId.flatMap { $0 == transaction.productId ? nil : $0 }
            if let target, target != pending {
                let change = ProductChange(
                    fromProductId: transaction.productId, toProductId: target,
                    kind: ProductChange.classify(
                        from: catalog[transaction.productId], to: catalog[target], timing: .atNextRenewal),
                    timing: .atNextRenewal, effectiveAt: expires(index))
                var event = builder.event(
                    .productChange, key: "\(transaction.transactionId)/\(target)/\(instant)", at: snapshot.signedDate,
                    transaction: transaction, productId: target,
                    summary:
                        "\(change.kind.rawValue.lowercased()) to \(target) scheduled for \(expires(index).humanReadable)"
                )
                event.productChange = change
                events.append(event)
            } else if target == nil, snapshot.autoRenewProductId != nil, let withdrawn = pending,
                withdrawn != transaction.productId
            {
                // The customer went back to the current product before the change took effect
                // (Apple: DID_CHANGE_RENEWAL_PREF without subtype): as visible as the change.
                var change = ProductChange(
                    fromProductId: transaction.productId, toProductId: withdrawn,
                    kind: ProductChange.classify(
                        from: catalog[transaction.productId], to: catalog[withdrawn], timing: .atNextRenewal),
                    timing: .atNextRenewal, effectiveAt: expires(index))
                change.isWithdrawn = true
                var event = builder.event(
                    .productChange, key: "\(transaction.transactionId)/\(withdrawn)/withdrawn/\(instant)",
                    at: snapshot.signedDate, transaction: transaction, productId: transaction.productId,
                    summary:
                        "\(change.kind.rawValue.lowercased()) to \(withdrawn) withdrawn: \(transaction.productId) renews \(expires(index).humanReadable)"
                )
                event.productChange = change
                events.append(event)
            }
            if snapshot.autoRenewProductId != nil { pending = target }
            if let status = snapshot.priceIncreaseStatus {
                if status == 0 && priceStatus != 0 || status == 1 && priceStatus == 0 {
                    let consent: PriceIncreaseConsent = status == 0 ? .pending : .accepted
                    var event = builder.event(
                        .priceIncreaseConsent, key: "\(transaction.transactionId)/\(consent.rawValue)/\(instant)",
                        at: snapshot.signedDate, transaction: transaction,
                        summary: consent == .pending
                            ? "price increase awaiting the customer's consent" : "customer accepted the price increase")
                    event.priceIncreaseConsent = consent
                    events.append(event)
                }
                priceStatus = status
            }
        }
        return events
    }
}

extension SubscriptionChain.Start {
    /// The previous period flowed into this one without a lapse (so it was replaced, not ended).
    var continuesService: Bool {
        switch self {
        case .renewal, .trialConversion, .billingRecovery, .productChange: return true
        case .initial, .resubscribe: return false
        }
    }
}
