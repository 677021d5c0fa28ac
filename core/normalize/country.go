package normalize

// iso3166 lists the ISO 3166-1 alpha-2 country codes, two letters each, in
// order: the 249 officially assigned codes as of ISO/TC 46 N1108
// (2023-04-05), as the public-domain tz database lists them in
// iso3166.tab, and XK (Kosovo), a user-assigned code that SWIFT uses in
// BICs and the IBAN registry.
const iso3166 = "ADAEAFAGAIALAMAOAQARASATAUAWAXAZBABBBDBEBFBGBHBIBJBLBMBNBOBQBRBSBTBVBWBYBZCACCCDCFCGCHCICKCLCMCNCOCRCUCVCWCXCYCZDEDJDKDMDODZECEEEGEHERESETFIFJFKFMFOFRGAGBGDGEGFGGGHGIGLGMGNGPGQGRGSGTGUGWGYHKHMHNHRHTHUIDIEILIMINIOIQIRISITJEJMJOJPKEKGKHKIKMKNKPKRKWKYKZLALBLCLILKLRLSLTLULVLYMAMCMDMEMFMGMHMKMLMMMNMOMPMQMRMSMTMUMVMWMXMYMZNANCNENFNGNINLNONPNRNUNZOMPAPEPFPGPHPKPLPMPNPRPSPTPWPYQARERORSRURWSASBSCSDSESGSHSISJSKSLSMSNSOSRSSSTSVSXSYSZTCTDTFTGTHTJTKTLTMTNTOTRTTTVTWTZUAUGUMUSUYUZVAVCVEVGVIVNVUWFWSXKYEYTZAZMZW"

// isCountry reports whether cc, two upper-case letters, is in iso3166.
func isCountry(cc string) bool {
	if len(cc) != 2 {
		return false
	}
	lo, hi := 0, len(iso3166)/2
	for lo < hi {
		m := (lo + hi) / 2
		switch c := iso3166[2*m : 2*m+2]; {
		case c == cc:
			return true
		case c < cc:
			lo = m + 1
		default:
			hi = m
		}
	}
	return false
}
