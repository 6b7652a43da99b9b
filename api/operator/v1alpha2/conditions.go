package v1alpha2

// Condition types of providers. The first four are upstream's; Paused and DeletionBlocked are capstan's.
const (
	// PreflightCheckCondition is True when the provider passed the checks made before installing it.
	PreflightCheckCondition = "PreflightCheckPassed"
	// ProviderInstalledCondition is True when the provider's components are applied at spec.version.
	ProviderInstalledCondition = "ProviderInstalled"
	// ProviderUpgradedCondition is True after the provider was taken from one version to another.
	ProviderUpgradedCondition = "ProviderUpgraded"
	// ReadyCondition mirrors the Available condition of the provider's Deployments.
	ReadyCondition = "Ready"
	// PausedCondition is True while spec.paused is.
	PausedCondition = "Paused"
	// DeletionBlockedCondition is True while a deletion of the provider waits for what still uses it.
	DeletionBlockedCondition = "DeletionBlocked"
)

// Condition reasons. Upstream's names are kept where upstream has the reason.
const (
	// PreflightChecksPassedReason is the reason of a passed preflight check.
	PreflightChecksPassedReason = "PreflightChecksPassed"
	// MoreThanOneProviderInstanceExistsReason says another provider of the same kind and name exists.
	MoreThanOneProviderInstanceExistsReason = "MoreThanOneExists"
	// IncorrectVersionFormatReason says spec.version is not a semantic version.
	IncorrectVersionFormatReason = "IncorrectVersionFormat"
	// IncorrectCoreProviderNameReason says a CoreProvider is not named cluster-api.
	IncorrectCoreProviderNameReason = "IncorrectCoreProviderNameReason"
	// FetchConfigValidationErrorReason says spec.fetchConfig is wrong, or missing for an unknown name.
	FetchConfigValidationErrorReason = "FetchConfigValidationError"
	// UnknownProviderReason says the name is not one of clusterctl's providers and no fetchConfig is given.
	UnknownProviderReason = "UnknownProvider"
	// UnsupportedFieldReason says the spec uses a field capstan refuses.
	UnsupportedFieldReason = "UnsupportedField"
	// CAPIVersionIncompatibilityReason says the provider's contract differs from the core's.
	CAPIVersionIncompatibilityReason = "CAPIVersionIncompatibility"
	// WaitingForCoreProviderReadyReason says a provider waits for the CoreProvider to be Ready.
	WaitingForCoreProviderReadyReason = "WaitingForCoreProviderReady"
	// UnsupportedProviderDowngradeReason says a downgrade across minor versions was asked for.
	UnsupportedProviderDowngradeReason = "UnsupportedProviderDowngradeReason"
	// WaitingForProvidersPausedReason says a core upgrade to a new contract waits for the providers on
	// the old contract to be paused.
	WaitingForProvidersPausedReason = "WaitingForProvidersPaused"
	// UnpauseRefusedReason says a provider stays paused because it is on an older contract than the core.
	UnpauseRefusedReason = "UnpauseRefused"

	// ComponentsFetchErrorReason says the components or metadata could not be fetched.
	ComponentsFetchErrorReason = "ComponentsFetchError"
	// ComponentsCustomizationErrorReason says spec.manager, spec.deployment or the variables could not be
	// applied to the components.
	ComponentsCustomizationErrorReason = "ComponentsCustomizationError"
	// ComponentsPatchErrorReason says a patch could not be applied.
	ComponentsPatchErrorReason = "ComponentsPatchError"
	// ComponentsUpgradeErrorReason says the upgrade failed.
	ComponentsUpgradeErrorReason = "ComponentsUpgradeError"
	// InstallFailedReason says applying the components failed.
	InstallFailedReason = "InstallFailed"
	// ProviderInstalledReason is the reason of an installed provider.
	ProviderInstalledReason = "ProviderInstalled"
	// ProviderUpgradedReason is the reason of an upgraded provider.
	ProviderUpgradedReason = "ProviderUpgraded"
	// SpecChangedReason says a change of the spec (not of its version) was applied as an upgrade.
	SpecChangedReason = "SpecChanged"
	// FetchConfigChangedReason says a change of spec.fetchConfig was applied as an upgrade.
	FetchConfigChangedReason = "FetchConfigChanged"
	// ConfigSecretChangedReason says a change of the configSecret's content was applied as an upgrade.
	ConfigSecretChangedReason = "ConfigSecretChanged"
	// ComponentsChangedReason says a change of the release's content at the same version, or of what
	// the components are rendered with, was applied as an upgrade.
	ComponentsChangedReason = "ComponentsChanged"
	// TakenOverReason says the operator took over a provider that clusterctl installed.
	TakenOverReason = "TakenOver"
	// CachedReleaseModifiedReason says a cached release no longer matches the digest recorded when it
	// was fetched.
	CachedReleaseModifiedReason = "CachedReleaseModified"
	// OldComponentsDeletionErrorReason says deleting the provider's components failed.
	OldComponentsDeletionErrorReason = "OldComponentsDeletionError"

	// NoDeploymentAvailableConditionReason says a Deployment of the provider has no Available condition yet.
	NoDeploymentAvailableConditionReason = "NoDeploymentAvailableConditionReason"
	// DeploymentAvailableReason says the provider's Deployments are available.
	DeploymentAvailableReason = "DeploymentAvailable"
	// DeploymentUnavailableReason says a Deployment of the provider is not available.
	DeploymentUnavailableReason = "DeploymentUnavailable"
	// ProviderPausedReason says the provider is paused.
	ProviderPausedReason = "ProviderPaused"
	// NotPausedReason says the provider is not paused.
	NotPausedReason = "NotPaused"
	// ClustersExistReason says Clusters still use a provider that is being deleted.
	ClustersExistReason = "ClustersExist"
	// OtherProvidersExistReason says the core is being deleted while other providers exist.
	OtherProvidersExistReason = "OtherProvidersExist"
)
