/// Which windows a capture leaves out.
public enum MaskPlan {
    /// `mask_others` (PROTOCOL.md, `capture`): the requested `mask`, then
    /// every window of the listing that is not in `keep`, in stacking order,
    /// each once. A window in both `mask` and `keep` stays masked.
    public static func maskOthers(mask: [WindowID], keep: [WindowID], windows: WindowList) -> [WindowID] {
        var out = mask
        var seen = Set(mask)
        let kept = Set(keep)
        for window in windows.windows where !kept.contains(window.id) && seen.insert(window.id).inserted {
            out.append(window.id)
        }
        return out
    }
}
